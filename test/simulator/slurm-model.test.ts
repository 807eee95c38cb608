import type { SiteDefinitionInput } from '../../simulator/site-file';
import type { RealNode } from '../../scripts/slurm/real-slurm';
import { SimulatedSide } from '../support/slurm-differential';

/**
 * The simulated Slurm's rules per release, from SchedMD/slurm's code (tags slurm-22-05-8-1 and
 * slurm-24-11-7-1; each rule names its file in simulator/models/). The 22.05 ones are also checked
 * against a real 22.05.8 by test/real-slurm/differential.test.ts; the 24.11 ones only here.
 */

const NAMES = ['c01', 'c02', 'c03'];

async function site(version: string, extra: Partial<SiteDefinitionInput> & { slurm?: object } = {}): Promise<SimulatedSide> {
  const { slurm, ...rest } = extra;
  return SimulatedSide.start({
    nodes: NAMES.map((name, i) => ({ name, nid: i + 1 })),
    groups: { compute: NAMES },
    bootTemplates: ['img-2'],
    timing: { bootSeconds: 5, returnSeconds: 5 },
    slurm: { version, returnToService: 2, slurmdTimeoutSeconds: 30, resumeTimeoutSeconds: 60, accountingStorage: 'none', ...slurm },
    ...rest,
  });
}

const state = (node: RealNode | undefined) => node && { state: [node.base, ...[...node.flags].sort()].join('+'), reason: node.reason };

async function nodeOf(side: SimulatedSide, name: string) {
  return state((await side.nodes()).find((n) => n.name === name));
}

async function ok(side: SimulatedSide, ...argv: string[]) {
  const result = await side.run(argv);
  expect({ argv, code: result.code, stderr: result.stderr }).toEqual({ argv, code: 0, stderr: '' });
  return result;
}

describe.each(['22.05.8', '24.11.5'])('the simulated Slurm %s', (version) => {
  const modern = version.startsWith('24');
  let side: SimulatedSide;
  afterEach(() => side?.stop());

  test("scontrol reboot ASAP nextstate=RESUME lifts every drain at registration, an admin's too (node_mgr.c validate_node_specs)", async () => {
    side = await site(version);
    await ok(side, 'scontrol', 'update', 'NodeName=c01', 'State=DRAIN', 'Reason=admin: bad dimm');
    await ok(side, 'scontrol', 'reboot', 'ASAP', 'nextstate=RESUME', 'reason=rolling-upgrade', 'c01');
    expect(await nodeOf(side, 'c01')).toEqual({ state: 'DOWN+DRAIN+REBOOT_ISSUED', reason: 'rolling-upgrade : reboot issued' });
    side.advance(10);
    // The reason goes with the drain where node_up clears it: 22.05 always, 24.11 only with accounting.
    expect(await nodeOf(side, 'c01')).toEqual({ state: 'IDLE', reason: modern ? 'rolling-upgrade : reboot issued' : '' });
  });

  test('a node with a reboot pending waits for its job, then reboots', async () => {
    side = await site(version);
    await ok(side, 'sbatch', '-w', 'c02', '--wrap', 'sleep 20');
    await ok(side, 'scontrol', 'reboot', 'ASAP', 'nextstate=RESUME', 'reason=rolling-upgrade', 'c02');
    expect(await nodeOf(side, 'c02')).toEqual({ state: 'ALLOCATED+DRAIN+REBOOT_REQUESTED', reason: 'rolling-upgrade' });
    side.advance(20);
    expect((await nodeOf(side, 'c02'))?.state).toBe('DOWN+DRAIN+REBOOT_ISSUED');
    side.advance(10);
    expect((await nodeOf(side, 'c02'))?.state).toBe('IDLE');
  });

  test('scontrol reboot ASAP with no nextstate, on a node drained before: 22.05 lifts the drain (next_state=RESUME), 24.11 keeps it (proc_req.c)', async () => {
    side = await site(version);
    await ok(side, 'scontrol', 'update', 'NodeName=c01', 'State=DRAIN', 'Reason=admin');
    await ok(side, 'scontrol', 'reboot', 'ASAP', 'c01');
    side.advance(10);
    expect((await nodeOf(side, 'c01'))?.state).toBe(modern ? 'IDLE+DRAIN' : 'IDLE');
  });

  test.each([0, 1, 2] as const)('a boot-service reboot past SlurmdTimeout, ReturnToService=%i (ping_nodes.c, node_mgr.c)', async (rts) => {
    side = await site(version, { slurm: { returnToService: rts } });
    await ok(side, 'scontrol', 'update', 'NodeName=c01', 'State=DRAIN', 'Reason=rolling-upgrade');
    await side.stopNode('c01');
    expect(await nodeOf(side, 'c01')).toEqual({ state: 'IDLE+DRAIN+NOT_RESPONDING', reason: 'rolling-upgrade' });
    side.advance(30);
    // 24.11 appends (set_node_reason); 22.05's set_node_down_ptr kept a reason the node had.
    const down = modern ? 'rolling-upgrade : Not responding' : 'rolling-upgrade';
    expect(await nodeOf(side, 'c01')).toEqual({ state: 'DOWN+DRAIN+NOT_RESPONDING', reason: down });
    await side.startNode('c01');
    expect(await nodeOf(side, 'c01')).toEqual(rts === 2 ? { state: 'IDLE+DRAIN', reason: down } : { state: 'DOWN+DRAIN', reason: down });
  });

  test('a node that reboots unasked, undrained, is DOWN "Node unexpectedly rebooted" unless ReturnToService=2', async () => {
    side = await site(version, { slurm: { returnToService: 1 } });
    await side.stopNode('c03');
    side.advance(5);
    await side.startNode('c03');
    expect(await nodeOf(side, 'c03')).toEqual({ state: 'DOWN', reason: 'Node unexpectedly rebooted' });
  });

  test('a scontrol reboot that never comes back is DOWN at ResumeTimeout; 22.05 also dropped the drain (node_mgr.c check_reboot_nodes)', async () => {
    side = await site(version, {
      nodes: NAMES.map((name, i) => ({ name, nid: i + 1, ...(name === 'c01' ? { faults: { returnToService: 'never' as const } } : {}) })),
    });
    await ok(side, 'scontrol', 'reboot', 'ASAP', 'nextstate=RESUME', 'reason=rolling-upgrade', 'c01');
    side.advance(60);
    expect(await nodeOf(side, 'c01')).toEqual({
      state: modern ? 'DOWN+DRAIN+NOT_RESPONDING' : 'DOWN+NOT_RESPONDING',
      reason: 'rolling-upgrade : reboot issued : reboot timed out',
    });
  });

  test('features set with scontrol update are gone after scontrol reconfigure and after a slurmctld restart', async () => {
    side = await site(version);
    const features = async () => (await side.nodes()).find((n) => n.name === 'c02')!.features.sort();
    await ok(side, 'scontrol', 'update', 'NodeName=c02', 'AvailableFeatures=role:Compute,compute,upgrading', 'ActiveFeatures=role:Compute,compute,upgrading');
    expect(await features()).toEqual(['compute', 'role:Compute', 'upgrading']);
    expect(side.simulator.inventory.getGroup('upgrading').members).toEqual(['c02']);
    await ok(side, 'scontrol', 'reconfigure');
    expect(await features()).toEqual(['compute', 'role:Compute']);
    expect(side.simulator.inventory.getGroup('upgrading').members).toEqual([]);
    // Removing a group feature comes back too.
    await ok(side, 'scontrol', 'update', 'NodeName=c02', 'AvailableFeatures=role:Compute', 'ActiveFeatures=role:Compute');
    expect(side.simulator.inventory.getGroup('compute').members).toEqual(['c01', 'c03']);
    await side.restartController();
    expect(await features()).toEqual(['compute', 'role:Compute']);
  });

  test('the active features must stay a subset of the available ones (node_mgr.c _valid_features_act)', async () => {
    side = await site(version);
    const result = await side.run(['scontrol', 'update', 'NodeName=c02', 'AvailableFeatures=role:Compute,upgrading']);
    expect(result).toMatchObject({ code: 1, stderr: 'slurm_update error: Active features not subset of available features\n' });
  });

  test('COMPLETING is a flag: the Epilog after a job; drained meanwhile the node is DRAINING, then DRAINED', async () => {
    side = await site(version, { timing: { bootSeconds: 5, returnSeconds: 5, epilogSeconds: 10 } });
    await ok(side, 'sbatch', '-w', 'c01', '--wrap', 'sleep 5');
    side.advance(5);
    expect(await nodeOf(side, 'c01')).toEqual({ state: 'IDLE+COMPLETING', reason: '' });
    await ok(side, 'scontrol', 'update', 'NodeName=c01', 'State=DRAIN', 'Reason=rolling-upgrade');
    expect(side.simulator.state().nodes.c01!.wlmState).toBe('DRAINING');
    side.advance(10);
    expect(await nodeOf(side, 'c01')).toEqual({ state: 'IDLE+DRAIN', reason: 'rolling-upgrade' });
  });

  test.each([
    ['none', !version.startsWith('24')],
    ['slurmdbd', true],
  ] as const)('RESUME of an idle drained node with accounting %s: the reason is cleared: %s (accounting_storage.c)', async (accountingStorage, cleared) => {
    side = await site(version, { slurm: { accountingStorage } });
    await ok(side, 'scontrol', 'update', 'NodeName=c01', 'State=DRAIN', 'Reason=admin: bad dimm');
    await ok(side, 'scontrol', 'update', 'NodeName=c01', 'State=RESUME');
    expect(await nodeOf(side, 'c01')).toEqual({ state: 'IDLE', reason: cleared ? '' : 'admin: bad dimm' });
  });

  test('RESUME of a node neither drained, failed nor down is refused, as scontrol says', async () => {
    side = await site(version);
    expect(await side.run(['scontrol', 'update', 'NodeName=c01', 'State=RESUME'])).toMatchObject({
      code: 1,
      stderr: 'slurm_update error: Invalid node state specified\n',
    });
  });

  test('State=FAIL sets FAIL without DRAIN (node_mgr.c update_node)', async () => {
    side = await site(version);
    await ok(side, 'scontrol', 'update', 'NodeName=c01', 'State=FAIL', 'Reason=upgrading-boot-session-failed');
    expect(await nodeOf(side, 'c01')).toEqual({ state: 'IDLE+FAIL', reason: 'upgrading-boot-session-failed' });
  });
});

describe("the simulated Slurm 22.05's command line (what a real 22.05.8 printed)", () => {
  let side: SimulatedSide;
  beforeEach(async () => {
    side = await site('22.05.8');
  });
  afterEach(() => side.stop());

  test("scontrol has no --json: exit 1, scontrol's own message", async () => {
    expect(await side.run(['scontrol', '--json', 'show', 'node', 'c01'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'scontrol: unrecognized option \'--json\'\nTry "scontrol --help" for more information\n',
    });
  });

  test('scontrol --version names the release', async () => {
    expect((await side.run(['scontrol', '--version'])).stdout).toBe('slurm 22.05.8\n');
  });

  test("sinfo --json prints v0.0.38's shape, every node whatever -n says", async () => {
    await ok(side, 'scontrol', 'update', 'NodeName=c02', 'State=DRAIN', 'Reason=admin: bad dimm');
    const printed = JSON.parse((await ok(side, 'sinfo', '--json', '-n', 'c02')).stdout) as {
      meta: { plugin: { type: string } };
      nodes: Record<string, unknown>[];
    };
    expect(printed.meta.plugin.type).toBe('openapi/v0.0.38');
    expect(printed.nodes.map((n) => n.name)).toEqual(NAMES);
    expect(printed.nodes[1]).toMatchObject({
      state: 'idle',
      state_flags: ['DRAIN'],
      reason: 'admin: bad dimm',
      features: 'role:Compute,compute',
      active_features: 'role:Compute,compute',
    });
  });

  test('scontrol -o show node prints one Key=Value line per node, State with its flags, Reason last; an unknown node is "not found", exit 1', async () => {
    await ok(side, 'scontrol', 'update', 'NodeName=c02', 'State=DRAIN', 'Reason=admin: bad dimm');
    const { code, stdout } = await side.run(['scontrol', '-o', 'show', 'node', 'c[02-03],nope']);
    const lines = stdout.trimEnd().split('\n');
    expect(code).toBe(1);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^NodeName=c02 .* AvailableFeatures=role:Compute,compute ActiveFeatures=role:Compute,compute .* State=IDLE\+DRAIN .* BootTime=None .* Reason=admin: bad dimm \[root@[\d-]+T[\d:]+\]$/,
    );
    expect(lines[1]).toMatch(/^NodeName=c03 .* State=IDLE /);
    expect(lines[1]).not.toContain('Reason=');
    expect(lines[2]).toBe('Node nope not found');
  });

  test('scontrol refuses an unknown node and a drain without a reason with its own messages', async () => {
    expect(await side.run(['scontrol', 'update', 'NodeName=nope', 'State=DRAIN', 'Reason=x'])).toMatchObject({
      code: 1,
      stderr: 'slurm_update error: Invalid node name specified\n',
    });
    expect(await side.run(['scontrol', 'update', 'NodeName=c01', 'State=DRAIN'])).toMatchObject({
      code: 1,
      stderr: 'You must specify a reason when DOWNING or DRAINING a node. Request denied\n',
    });
    expect(await side.run(['scontrol', 'reboot', 'nextstate=bogus', 'c01'])).toMatchObject({
      code: 1,
      stderr: 'Invalid state: bogus\nValid states: DOWN, RESUME\n',
    });
  });
});

describe('the simulated Slurm 24.11: scontrol --json in data_parser v0.0.42', () => {
  test('prints the nodes with the release and its data_parser', async () => {
    const side = await site('24.11.5');
    try {
      const printed = JSON.parse((await ok(side, 'scontrol', '--json', 'show', 'node', 'c01')).stdout) as {
        meta: { plugin: { data_parser: string }; slurm: { release: string } };
        nodes: { name: string; state: string[]; boot_time: unknown }[];
      };
      expect(printed.meta.plugin.data_parser).toBe('data_parser/v0.0.42');
      expect(printed.meta.slurm.release).toBe('24.11.5');
      expect(printed.nodes.map((n) => [n.name, n.state, n.boot_time])).toEqual([['c01', ['IDLE'], { set: false, infinite: false, number: 0 }]]);
      expect((await side.run(['sinfo', '--json'])).code).toBe(1);
    } finally {
      await side.stop();
    }
  });
});
