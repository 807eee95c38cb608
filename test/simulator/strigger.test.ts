import type { TriggerFiring } from '../../simulator/models/trigger-manager';
import { SimulatedSide } from '../support/slurm-differential';

/**
 * The simulated strigger's rules (simulator/README.md "strigger"; src/slurmctld/trigger_mgr.c,
 * controller.c, src/strigger/): a pass every 16 s of the simulator's clock from slurmctld's start
 * (TRIGGER_INTERVAL 15, taken when more than that went by), the nodes changed since the last pass in one
 * run per trigger, one-shot unless PERM, a lost firing and a failing program never retried. Checked
 * against a real Slurm, per release, by test/real-slurm/strigger.test.ts.
 */

const NAMES = ['c01', 'c02', 'c03', 'c04'];
const PROGRAM = '/opt/rollout/relay';

let side: SimulatedSide;
let seconds: number;
afterEach(() => side?.stop());

async function start(): Promise<void> {
  side = await SimulatedSide.start({
    nodes: NAMES.map((name, i) => ({ name, nid: i + 1 })),
    bootTemplates: ['img-2'],
    timing: { bootSeconds: 1, returnSeconds: 1 },
    slurm: { version: '24.11.5', returnToService: 2, slurmdTimeoutSeconds: 30, resumeTimeoutSeconds: 60, accountingStorage: 'none' },
  });
  seconds = 0;
}

const triggers = () => side.simulator.workloadManager.triggers;

async function ok(...argv: string[]) {
  const result = await side.run(argv);
  expect({ argv, code: result.code, stderr: result.stderr }).toEqual({ argv, code: 0, stderr: '' });
  return result.stdout;
}

/** Moves the clock on to `second` (from the start), a second at a time, a command syncing each. */
async function at(second: number): Promise<void> {
  for (; seconds < second; seconds++) {
    side.advance(1);
    await side.run(['strigger', '--get']);
  }
}

const fired = () => triggers().firings.map((f) => ({ id: f.triggerId, event: f.event, hostlist: f.hostlist, outcome: f.outcome }));
const ids = async () =>
  (await ok('strigger', '--get', '--noheader'))
    .split('\n')
    .filter(Boolean)
    .map((line) => Number(line.trim().split(/\s+/)[0]));

describe('the simulated strigger', () => {
  test('a pass every 16 s from the start: a change fires at the next pass, not before', async () => {
    await start();
    await ok('strigger', '--set', '--node=c01', '--drained', `--program=${PROGRAM}`, '--flags=PERM');
    await at(1);
    await ok('scontrol', 'update', 'NodeName=c01', 'State=DRAIN', 'Reason=t');
    await at(15);
    expect(fired()).toEqual([]);
    await at(16);
    expect(fired()).toEqual([{ id: 1, event: 'drained', hostlist: 'c01', outcome: 'ran' }]);
    const first = triggers().firings[0]!.at;
    await ok('scontrol', 'update', 'NodeName=c01', 'State=RESUME');
    await at(17);
    await ok('scontrol', 'update', 'NodeName=c01', 'State=DRAIN', 'Reason=t');
    await at(31);
    expect(fired()).toHaveLength(1);
    await at(32);
    expect(fired()).toHaveLength(2);
    expect(triggers().firings[1]!.at - first).toBe(16_000);
  });

  test('the nodes changed within one pass are one run with one hostlist, in slurm.conf order; the next pass another', async () => {
    await start();
    await ok('strigger', '--set', '--node', '--drained', `--program=${PROGRAM} drained`, '--flags=PERM');
    await at(2);
    await ok('scontrol', 'update', 'NodeName=c03', 'State=DRAIN', 'Reason=t');
    await at(10);
    await ok('scontrol', 'update', 'NodeName=c[01-02]', 'State=DRAIN', 'Reason=t');
    await at(17);
    await ok('scontrol', 'update', 'NodeName=c04', 'State=DRAIN', 'Reason=t');
    await at(32);
    expect(triggers().firings.map((f) => [f.hostlist, f.program])).toEqual([
      ['c[01-03]', `${PROGRAM} drained`],
      ['c04', `${PROGRAM} drained`],
    ]);
  });

  test('one-shot triggers leave --get when they fire; PERM ones stay, first in the list, and fire again', async () => {
    await start();
    await ok('strigger', '--set', '--node=c01', '--drained', `--program=${PROGRAM}`);
    await ok('strigger', '--set', '--node=c[01-02]', '--drained', `--program=${PROGRAM}`, '--flags=PERM');
    await ok('strigger', '--set', '--node=c03', '--down', `--program=${PROGRAM}`);
    expect(await ids()).toEqual([1, 2, 3]);
    await ok('scontrol', 'update', 'NodeName=c01', 'State=DRAIN', 'Reason=t');
    await at(16);
    expect(fired()).toEqual([
      { id: 1, event: 'drained', hostlist: 'c01', outcome: 'ran' },
      { id: 2, event: 'drained', hostlist: 'c01', outcome: 'ran' },
    ]);
    expect(await ids()).toEqual([2, 3]);
    await ok('scontrol', 'update', 'NodeName=c02', 'State=DRAIN', 'Reason=t');
    await at(32);
    expect(fired().slice(2)).toEqual([{ id: 2, event: 'drained', hostlist: 'c02', outcome: 'ran' }]);
    expect(await ids()).toEqual([2, 3]);
    await ok('strigger', '--clear', '--id=2');
    expect(await ids()).toEqual([3]);
  });

  test('a drained trigger waits for the job: a busy node drained fires when its job ends', async () => {
    await start();
    await ok('strigger', '--set', '--node=c02', '--drained', `--program=${PROGRAM}`);
    await ok('sbatch', '-w', 'c02', '--wrap', 'sleep 40');
    await ok('scontrol', 'update', 'NodeName=c02', 'State=DRAIN', 'Reason=t');
    await at(32);
    expect(fired()).toEqual([]);
    await at(48);
    expect(fired()).toEqual([{ id: 1, event: 'drained', hostlist: 'c02', outcome: 'ran' }]);
  });

  test('scontrol reboot: no down (slurmctld sets DOWN+REBOOT_ISSUED itself), up when the node registers; a slurmd gone past SlurmdTimeout, State=DOWN: down', async () => {
    await start();
    await ok('strigger', '--set', '--node', '--down', `--program=${PROGRAM} down`);
    await ok('strigger', '--set', '--node', '--up', `--program=${PROGRAM} up`);
    await ok('scontrol', 'reboot', 'ASAP', 'nextstate=RESUME', 'reason=t', 'c01');
    await at(16);
    expect(fired()).toEqual([{ id: 2, event: 'up', hostlist: 'c01', outcome: 'ran' }]);
    await side.stopNode('c04');
    await at(48);
    expect(fired().slice(1)).toEqual([{ id: 1, event: 'down', hostlist: 'c04', outcome: 'ran' }]);
    // The one-shot down trigger is gone: a new one (id 3) for a node set DOWN by hand.
    await ok('strigger', '--set', '--node=c03', '--down', `--program=${PROGRAM} down`);
    await ok('scontrol', 'update', 'NodeName=c03', 'State=DOWN', 'Reason=t');
    await at(64);
    expect(fired().slice(2)).toEqual([{ id: 3, event: 'down', hostlist: 'c03', outcome: 'ran' }]);
  });

  test('a change in the same pass before a trigger was set fires it (the events are slurmctld-wide, cleared at each pass)', async () => {
    await start();
    await ok('scontrol', 'update', 'NodeName=c01', 'State=DRAIN', 'Reason=t');
    await at(3);
    await ok('strigger', '--set', '--node=c01', '--drained', `--program=${PROGRAM}`);
    await at(16);
    expect(fired()).toEqual([{ id: 1, event: 'drained', hostlist: 'c01', outcome: 'ran' }]);
  });

  test('a lost firing and a failing program are not retried; the hook sees every firing', async () => {
    await start();
    const seen: TriggerFiring[] = [];
    const unsubscribe = triggers().onFiring((firing) => seen.push(firing));
    await ok('strigger', '--set', '--node=c01', '--drained', `--program=${PROGRAM}`);
    await ok('strigger', '--set', '--node=c02', '--drained', `--program=${PROGRAM}`);
    await ok('strigger', '--set', '--node=c03', '--drained', `--program=${PROGRAM}`);
    triggers().faults.loseFirings = 1;
    await ok('scontrol', 'update', 'NodeName=c01', 'State=DRAIN', 'Reason=t');
    await at(16);
    triggers().faults.failProgram = true;
    await ok('scontrol', 'update', 'NodeName=c02', 'State=DRAIN', 'Reason=t');
    await at(32);
    triggers().faults.failProgram = false;
    unsubscribe();
    await ok('scontrol', 'update', 'NodeName=c03', 'State=DRAIN', 'Reason=t');
    await at(80);
    expect(fired()).toEqual([
      { id: 1, event: 'drained', hostlist: 'c01', outcome: 'lost' },
      { id: 2, event: 'drained', hostlist: 'c02', outcome: 'failed' },
      { id: 3, event: 'drained', hostlist: 'c03', outcome: 'ran' },
    ]);
    expect(seen.map((f) => f.outcome)).toEqual(['lost', 'failed']);
    // The site's state carries them (what a scenario judges a run by).
    expect(side.simulator.state().triggerFirings?.map((f) => f.outcome)).toEqual(['lost', 'failed', 'ran']);
    expect(await ids()).toEqual([]);
  });

  test("strigger's own errors, as src/strigger/opts.c and slurm_perror print them", async () => {
    await start();
    const run = async (...argv: string[]) => {
      const r = await side.run(['strigger', ...argv]);
      return `${r.code} ${r.stderr.trim()}`;
    };
    expect(await run('--node', '--up', `--program=${PROGRAM}`)).toBe(
      '1 strigger: error: You must use exactly one of the following options: --set, --get or --clear',
    );
    expect(await run('--set', '--node', `--program=${PROGRAM}`)).toBe('1 strigger: error: You must specify a trigger');
    expect(await run('--set', '--node', '--up')).toBe('1 strigger: error: You must specify a --program value');
    expect(await run('--set', '--node', '--up', '--program=relay')).toBe('1 strigger: error: The --program value must start with "/"');
    expect(await run('--set', '--node=c09', '--up', `--program=${PROGRAM}`)).toBe('1 slurm_set_trigger: Invalid node name specified');
    expect(await run('--set', '--node', '--up', `--program=${PROGRAM}`, '--flags=forever')).toBe('1 strigger: error: Invalid flags forever');
    expect(await run('--clear')).toBe('1 strigger: error: You must specify a --id, --jobid, or --user to clear');
    expect(await run('--clear', '--id=7')).toBe('1 slurm_clear_trigger: No such process');
    expect(await run('--get')).toBe('0 ');
  });
});
