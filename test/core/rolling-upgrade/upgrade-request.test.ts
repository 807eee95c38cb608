import { InvalidInputError } from '../../../core/errors';
import { upgradePolicy } from '../../../core/rolling-upgrade/upgrade-policy';
import { healthCheckCommand, parseUpgradeRequest, unsupportedControls } from '../../../core/rolling-upgrade/upgrade-request';

const base = {
  startingLabel: 'compute',
  upgradingLabel: 'upgrading',
  failedLabel: 'failed',
  upgradeStepSize: 8,
  upgradeTemplateId: 'img-2',
  workloadManagerType: 'slurm',
};

function problems(request: Record<string, unknown>): string[] {
  try {
    parseUpgradeRequest({ ...base, ...request });
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInputError);
    return (err as InvalidInputError).problems.map((p) => `${p.field}: ${p.message}`);
  }
  throw new Error('the request was accepted');
}

describe('parseUpgradeRequest: the window controls', () => {
  it('defaults keep CRUS lock-step', () => {
    const request = parseUpgradeRequest(base);
    expect(request).toMatchObject({ mode: 'lockstep', order: 'plan', approval: 'none', bakeSeconds: 0, haltOnOutsideFailures: false });
    expect(upgradePolicy(request, 20)).toMatchObject({ admission: 'together', waveSizes: [8], afterWaves: 'repeat-last', maxInTransition: 8, drainAhead: 0 });
  });

  it('accepts a full window request and resolves percentages against the plan', () => {
    const request = parseUpgradeRequest({
      ...base,
      mode: 'window',
      maxUnavailable: '10%',
      drainAhead: 32,
      order: 'idle-first',
      maxUnavailablePerRack: 2,
      batches: [1, 5, '20%'],
      pauseAfterBatches: [1],
      maxFailed: '10%',
      haltOnOutsideFailures: true,
      bakeSeconds: 600,
      healthCheck: { command: 'ssh {node} /usr/sbin/nhc' },
      maintenanceWindows: [{ cron: '0 22 * * 1-5', durationMinutes: 240, timeZone: 'Europe/Zurich' }],
    });
    expect(request.healthCheck).toEqual({ command: 'ssh {node} /usr/sbin/nhc' });
    expect(healthCheckCommand(request)).toEqual({ command: 'ssh {node} /usr/sbin/nhc', timeoutSeconds: 300 });
    expect(healthCheckCommand({ healthCheck: { command: 'pdsh -w {node} nhc', timeoutSeconds: 60 } })).toEqual({
      command: 'pdsh -w {node} nhc',
      timeoutSeconds: 60,
    });
    expect(healthCheckCommand({ healthCheck: {} })).toBeUndefined();
    expect(upgradePolicy(request, 512)).toEqual({
      admission: 'refill',
      waveSizes: [1, 5, 102],
      afterWaves: 'one-wave',
      maxInTransition: 51,
      drainAhead: 32,
      aheadHorizonSeconds: 30,
      order: 'idle-first',
      maxPerRack: 2,
      approvalBeforeWaves: [1],
      bakeSeconds: 600,
      maxFailedNodes: 51,
      haltOnOutsideFailures: true,
      maintenanceWindows: [{ cron: '0 22 * * 1-5', durationMinutes: 240, timeZone: 'Europe/Zurich' }],
    });
  });

  it('takes maxUnavailable from upgradeStepSize by default, and a small percentage as at least one node', () => {
    expect(upgradePolicy(parseUpgradeRequest({ ...base, mode: 'window' }), 100).maxInTransition).toBe(8);
    expect(upgradePolicy(parseUpgradeRequest({ ...base, mode: 'window', maxUnavailable: '1%' }), 20).maxInTransition).toBe(1);
    expect(upgradePolicy(parseUpgradeRequest({ ...base, maxFailed: '0%' }), 20).maxFailedNodes).toBe(0);
    expect(upgradePolicy(parseUpgradeRequest({ ...base, mode: 'window', batches: [1], approval: 'each-batch' }), 20).approvalBeforeWaves).toBe('every');
  });

  it('rejects window-only controls with lockstep, naming each', () => {
    expect(problems({ maxUnavailable: 4, drainAhead: 2, maxUnavailablePerRack: 1, batches: [1], order: 'idle-first' })).toEqual([
      "maxUnavailable: maxUnavailable applies to mode 'window' only: in mode 'lockstep' each step takes exactly upgradeStepSize nodes out of service at once, so the step size is the cap (give --step-size N, or --mode window --max-unavailable N)",
      "drainAhead: drainAhead applies to mode 'window' only (lockstep drains each step when it starts)",
      "maxUnavailablePerRack: maxUnavailablePerRack applies to mode 'window' only (lockstep takes upgradeStepSize nodes per step in plan order, whatever their rack)",
      "batches: batches applies to mode 'window' only (lockstep's batches are its steps of upgradeStepSize)",
      "order: order 'idle-first' applies to mode 'window' only (lockstep keeps plan order)",
    ]);
  });

  it('accepts the batch controls with lockstep, where a batch is a step', () => {
    const request = parseUpgradeRequest({ ...base, approval: 'each-batch', bakeSeconds: 60, maxFailed: 2, pauseAfterBatches: [3] });
    expect(upgradePolicy(request, 40)).toMatchObject({ approvalBeforeWaves: 'every', bakeSeconds: 60, maxFailedNodes: 2 });
  });

  it('rejects batch controls in a window without batches, and pauses after batches that do not exist', () => {
    expect(problems({ mode: 'window', approval: 'each-batch', pauseAfterBatches: [1], bakeSeconds: 10 })).toEqual([
      "approval: approval 'each-batch' needs batches in mode 'window'",
      "pauseAfterBatches: pauseAfterBatches needs batches in mode 'window'",
      "bakeSeconds: bakeSeconds needs batches in mode 'window'",
    ]);
    expect(problems({ mode: 'window', batches: [1, 2], pauseAfterBatches: [3] })).toEqual([
      'pauseAfterBatches[0]: there are 2 batches before the window; cannot pause after batch 3',
    ]);
  });

  it('rejects malformed values, naming the field', () => {
    expect(problems({ mode: 'rolling' })).toEqual(['mode: mode must be one of: lockstep, window']);
    expect(problems({ mode: 'window', maxUnavailable: 0 })).toEqual(['maxUnavailable: maxUnavailable must be at least 1']);
    expect(problems({ mode: 'window', maxUnavailable: '0%' })).toEqual([
      'maxUnavailable: maxUnavailable must be a whole number or a percentage such as "20%" (above 0 to 100)',
    ]);
    expect(problems({ mode: 'window', batches: [1, '120%'] })).toEqual([
      'batches[1]: batches must be a whole number or a percentage such as "20%" (above 0 to 100)',
    ]);
    expect(problems({ maxFailed: -1 })).toEqual(['maxFailed: maxFailed must be at least 0']);
    expect(problems({ mode: 'window', drainAhead: 1.5 })).toEqual(['drainAhead: drainAhead must be a whole number']);
    expect(problems({ healthCheck: { command: 'ssh {node} nhc\nreboot' } })).toEqual(['healthCheck.command: healthCheck.command must be one line']);
    expect(problems({ healthCheck: { command: '/usr/sbin/nhc' } })).toEqual([
      'healthCheck.command: healthCheck.command must name the node to check as {node} (e.g. "ssh {node} /usr/sbin/nhc")',
    ]);
    expect(problems({ healthCheck: { command: 'ssh {node} nhc {template}' } })).toEqual([
      'healthCheck.command: healthCheck.command may use only the placeholder {node}',
    ]);
    expect(problems({ healthCheck: { timeoutSeconds: 60 } })).toEqual([
      'healthCheck.timeoutSeconds: healthCheck.timeoutSeconds bounds the health check command: give healthCheck.command too',
    ]);
    expect(problems({ healthCheck: { command: 'ssh {node} nhc', timeoutSeconds: 0 } })[0]).toMatch(/^healthCheck\.timeoutSeconds: /);
    expect(problems({ healthCheck: { cmd: 'nhc' } })).toEqual(['healthCheck.cmd: unknown key']);
  });

  it('rejects a maintenance window with a bad cron or time zone', () => {
    const [cron] = problems({ maintenanceWindows: [{ cron: '61 * * * *', durationMinutes: 60 }] });
    expect(cron).toMatch(/^maintenanceWindows\[0\]\.cron: invalid cron '61 \* \* \* \*'/);
    expect(problems({ maintenanceWindows: [{ cron: '0 22 * * *', durationMinutes: 60, timeZone: 'Mars/Olympus' }] })).toEqual([
      "maintenanceWindows[0].timeZone: unknown time zone 'Mars/Olympus'",
    ]);
    expect(problems({ maintenanceWindows: [{ cron: '0 22 * * *', durationMinutes: 0 }] })).toEqual([
      'maintenanceWindows[0].durationMinutes: durationMinutes must be at least 1',
    ]);
  });
});

describe('parseUpgradeRequest: group labels', () => {
  it.each([
    ['upgradingLabel', 'upgrading nodes'],
    ['upgradingLabel', 'upgrading,compute'],
    ['upgradingLabel', '..'],
    ['failedLabel', '.'],
    ['startingLabel', 'compute/gpu'],
    ['startingLabel', 'comput\u00e9'],
    ['failedLabel', 'x'.repeat(10_000)],
    ['failedLabel', '-failed'],
  ])('refuses %s %j by its pattern, naming the field', (field, value) => {
    const found = problems({ [field]: value });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(new RegExp(`^${field}: ${field} .* is not a valid group label`));
    expect(found[0]!.length).toBeLessThan(400);
  });

  it('accepts the labels HSM and Slurm use', () => {
    expect(parseUpgradeRequest({ ...base, startingLabel: 'rack=x3000', upgradingLabel: 'upgrading_nodes-2.0', failedLabel: 'role:failed' })).toMatchObject({
      startingLabel: 'rack=x3000',
    });
  });
});

describe('unsupportedControls', () => {
  it('runs haltOnOutsideFailures in mode window, and refuses it in lockstep naming the field', () => {
    expect(unsupportedControls(parseUpgradeRequest({ ...base, mode: 'window', haltOnOutsideFailures: true }))).toEqual([]);
    expect(unsupportedControls(parseUpgradeRequest({ ...base, haltOnOutsideFailures: true }))).toEqual([
      {
        field: 'haltOnOutsideFailures',
        message: "halting on failures outside the plan in mode 'lockstep' is not supported by the workflow yet: it runs in mode 'window' (--mode window)",
      },
    ]);
  });

  it('runs reserveSlots in mode window, and refuses it in lockstep naming the field', () => {
    expect(unsupportedControls(parseUpgradeRequest({ ...base, mode: 'window', reserveSlots: true }))).toEqual([]);
    expect(unsupportedControls(parseUpgradeRequest({ ...base, reserveSlots: true }))).toEqual([
      {
        field: 'reserveSlots',
        message: "maintenance reservations in mode 'lockstep' is not supported by the workflow yet: it runs in mode 'window' (--mode window)",
      },
    ]);
    expect(() => parseUpgradeRequest({ ...base, mode: 'window', reserveSlots: 'yes' })).toThrow(/reserveSlots must be true or false/);
  });
});
