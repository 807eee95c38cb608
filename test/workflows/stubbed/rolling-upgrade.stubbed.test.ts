import { activityError, StubbedWorkflows, type Stub } from '../../support/stubbed-workflows';

/** The workflow's pointer between tasks, as the activities pass it on. */
interface Pointer extends Record<string, unknown> {
  upgradeId: string;
  stage: string;
  iteration: number;
  iterationLimit: number;
  waitSeconds: number;
  generation: number;
}

const opened = (over: Partial<Pointer> = {}): Pointer => ({
  upgradeId: 'u1',
  stage: 'STARTING',
  iteration: 0,
  iterationLimit: 1000,
  waitSeconds: 0,
  generation: 0,
  ...over,
});

/** A stage activity that moves the pointer to `stage` and asks for a wait of `waitSeconds`. */
const moveTo =
  (stage: string, waitSeconds = 0): Stub =>
  (payload) => ({ ...payload, stage, waitSeconds, iteration: (payload.iteration as number) + 1 });

/** Answers in turn, the last one for ever after. */
function inTurn(...stubs: Stub[]): Stub {
  let calls = 0;
  return (payload, call) => stubs[Math.min(calls++, stubs.length - 1)]!(payload, call);
}

const STAGE_FUNCTIONS: Record<string, string> = {
  STARTING: 'StartStep',
  QUIESCING: 'CheckQuiesce',
  QUIESCED: 'BootStep',
  BOOTING: 'CheckBoot',
  BOOTED: 'EvaluateBoot',
  WLM_WAITING: 'CheckReturnToService',
  ROLLING: 'AdvanceWindow',
  CANCELLING: 'CancelSession',
  CLEANUP: 'CleanUp',
};

describe('rolling upgrade workflow with stubbed activities, on virtual time', () => {
  let flows: StubbedWorkflows;
  beforeAll(() => {
    flows = new StubbedWorkflows();
  });
  it('waits exactly the waitSeconds each stage asks for between polls, and no longer', async () => {
    flows.use({
      OpenSession: () => opened(),
      StartStep: moveTo('QUIESCING', 30),
      CheckQuiesce: inTurn(moveTo('QUIESCING', 45), moveTo('QUIESCED')),
      BootStep: moveTo('BOOTING', 600),
      CheckBoot: inTurn(moveTo('BOOTING', 600), moveTo('BOOTING', 600), moveTo('BOOTED')),
      EvaluateBoot: moveTo('WLM_WAITING', 120),
      CheckReturnToService: moveTo('CLEANUP'),
      CleanUp: moveTo('COMPLETE'),
    });

    const outcome = await flows.run('rollingUpgrade', { any: 'request' });

    expect(outcome.status).toBe('SUCCEEDED');
    expect(flows.calls.map((c) => [c.fn, c.at])).toEqual([
      ['OpenSession', 0],
      ['StartStep', 0],
      ['CheckQuiesce', 30],
      ['CheckQuiesce', 75],
      ['BootStep', 75],
      ['CheckBoot', 675],
      ['CheckBoot', 1275],
      ['CheckBoot', 1875],
      ['EvaluateBoot', 1875],
      ['CheckReturnToService', 1995],
      ['CleanUp', 1995],
    ]);
    expect(flows.elapsedSeconds()).toBe(1995);
    // Open Session gets the request and the execution id.
    expect(flows.calls[0]!.payload).toEqual({ input: { any: 'request' }, executionId: expect.stringContaining(':execution:RollingUpgrade:') });
  });

  it('runs simulated days of polling (a real-time clock would take days)', async () => {
    flows.use({
      OpenSession: () => opened(),
      StartStep: moveTo('QUIESCING', 300),
      // A job that runs three days, polled every five minutes.
      CheckQuiesce: (payload, call) => (call.at < 3 * 86_400 ? moveTo('QUIESCING', 300) : moveTo('COMPLETE'))(payload, call),
    });

    const outcome = await flows.run('rollingUpgrade', {});

    expect(outcome.status).toBe('SUCCEEDED');
    expect(flows.elapsedSeconds()).toBe(3 * 86_400);
    expect(flows.callsOf('CheckQuiesce')).toHaveLength(3 * 288);
  });

  it('continues as a new execution once iterationLimit is reached, resuming the same session', async () => {
    let stored = opened({ iterationLimit: 3 });
    const save: Stub = (payload, call) => (stored = moveTo('QUIESCING', 10)(payload, call) as Pointer);
    flows.use({
      // A resumed execution reads the stored pointer back, with a fresh iteration budget.
      OpenSession: (payload) => {
        const input = payload.input as { resumeUpgradeId?: string; generation?: number };
        return input.resumeUpgradeId ? { ...stored, iteration: 0, generation: input.generation } : stored;
      },
      StartStep: save,
      CheckQuiesce: (payload, call) => (call.at >= 100 ? moveTo('COMPLETE')(payload, call) : save(payload, call)),
    });

    const outcome = await flows.run('rollingUpgrade', {}, 'u1');

    expect(outcome.status).toBe('SUCCEEDED');
    const openings = flows.callsOf('OpenSession').map((c) => c.payload.input);
    expect(openings[0]).toEqual({});
    expect(openings.slice(1)).toEqual(
      [1, 2, 3].map((generation) => ({ resumeUpgradeId: 'u1', generation, AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID: expect.any(String) })),
    );
    expect(flows.executionsOf('RollingUpgrade').map((arn) => arn.split(':').at(-1))).toEqual(['u1', 'u1-g1', 'u1-g2', 'u1-g3']);
    expect(outcome.executionArn).toMatch(/:u1-g3$/);
    // Continuing as new skips the Wait, and the resumed execution waits the stored waitSeconds
    // instead: polling keeps its 10-second pace across executions.
    expect(flows.callsOf('CheckQuiesce').map((c) => c.at)).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
  });

  it.each(Object.entries(STAGE_FUNCTIONS))('Dispatch Stage sends stage %s to %s', async (stage, fn) => {
    const stubs = Object.fromEntries(Object.values(STAGE_FUNCTIONS).map((name) => [name, moveTo('COMPLETE')]));
    flows.use({ ...stubs, OpenSession: () => opened({ stage }) });

    const outcome = await flows.run('rollingUpgrade', {});

    expect(outcome.status).toBe('SUCCEEDED');
    expect(flows.calls.map((c) => c.fn)).toEqual(['OpenSession', fn]);
  });

  it('fails with UnknownStage on a stage no task handles', async () => {
    flows.use({ OpenSession: () => opened({ stage: 'SIDEWAYS' }) });
    const outcome = await flows.run('rollingUpgrade', {});
    expect(outcome).toMatchObject({ status: 'FAILED', error: 'UnknownStage' });
  });

  it('ends at the Invalid Request Fail state on InvalidInputError, naming the field, and runs nothing else', async () => {
    flows.use({
      OpenSession: () => {
        throw activityError('InvalidInputError', 'upgradeStepSize: must be at least 1');
      },
      StartStep: moveTo('COMPLETE'),
    });

    const outcome = await flows.run('rollingUpgrade', {});

    expect(outcome.status).toBe('FAILED');
    expect(outcome.error).toBe('InvalidInputError');
    expect(outcome.cause).toContain('upgradeStepSize: must be at least 1');
    expect(flows.calls.map((c) => c.fn)).toEqual(['OpenSession']);
    expect(flows.elapsedSeconds()).toBe(0);
  });

  it('ends at Session Failed when a stage task breaks, with the error it raised', async () => {
    flows.use({
      OpenSession: () => opened(),
      StartStep: () => {
        throw activityError('StaleWriteError', 'the session moved on');
      },
    });
    const outcome = await flows.run('rollingUpgrade', {});
    expect(outcome).toMatchObject({ status: 'FAILED', error: 'StaleWriteError' });
  });
});
