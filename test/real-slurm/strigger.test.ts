import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describeRealSlurm } from '../support/describe-real-slurm';
import type { RealSlurmRelease } from '../../scripts/slurm/real-slurm';
import { differentialTable, RealSide, SimulatedSide, type CommandResult, type DifferentialRow } from '../support/slurm-differential';
import { TRIGGER_PASS_MS } from '../../simulator/models/trigger-manager';

/**
 * `strigger` in the simulator against a real Slurm, per release: the same triggers set on a real cluster
 * (4 nodes, one slurmd each on this machine) and on the simulator's head node, the same node changes made on
 * both, and compared: `strigger --get` after every change (ids, nodes, event, user, flags, program), the
 * firings (each run of the program: its own arguments and the hostlist Slurm appends), the errors of a
 * duplicate and of clearing an unknown id. The real trigger program is a script that appends its arguments
 * to a file; the simulator's firings are its TriggerManagerModel's. Rules: simulator/README.md "strigger".
 */

const NODES = ['c01', 'c02', 'c03', 'c04'];
/** One trigger pass (16 s) and a margin: the longest a firing may take after the change. */
const FIRING_SECONDS = TRIGGER_PASS_MS / 1000 + 4;
/** How long a step waits for its firings: two passes, so that a late one shows as late rather than as missing. */
const WAIT_SECONDS = (2 * TRIGGER_PASS_MS) / 1000 + 4;

interface Pair {
  real: RealSide;
  sim: SimulatedSide;
  /** The trigger program on the real cluster (the simulator is given the same path). */
  program: string;
  firingsFile: string;
}

async function startPair(release: RealSlurmRelease): Promise<Pair> {
  const real = await RealSide.start({ release, nodes: NODES.length, rebootDelaySeconds: 1, restd: false, returnToService: 2 });
  const dir = real.cluster.dir;
  const program = path.join(dir, 'trigger-program.sh');
  const firingsFile = path.join(dir, 'trigger-firings.log');
  // slurmctld runs it (as the trigger's user) with the program's own words, then the hostlist, as arguments.
  writeFileSync(program, `#!/bin/sh\necho "$*" >> ${firingsFile}\n`);
  chmodSync(program, 0o755);
  const sim = await SimulatedSide.start({
    nodes: NODES.map((name, i) => ({ name, nid: i + 1 })),
    bootTemplates: ['img-2'],
    timing: { bootSeconds: 1, returnSeconds: 1 },
    slurm: { version: real.cluster.version, returnToService: 2, slurmdTimeoutSeconds: 30, resumeTimeoutSeconds: 60, accountingStorage: 'none' },
  });
  return { real, sim, program, firingsFile };
}

function realFirings(pair: Pair): string[] {
  return existsSync(pair.firingsFile) ? readFileSync(pair.firingsFile, 'utf8').split('\n').filter(Boolean) : [];
}

/** The simulator's firings as the real program logs them: the program's own words after its path, then the hostlist. */
function simFirings(pair: Pair): string[] {
  return pair.sim.simulator.workloadManager.triggers.firings.map((f) => [...f.program.split(' ').slice(1), f.hostlist].join(' '));
}

/** Waits (real: polling; simulator: its clock a second at a time) until `count` firings were seen; the seconds taken. */
async function awaitFirings(pair: Pair, count: number): Promise<{ realSeconds: number; simSeconds: number }> {
  const started = Date.now();
  while (realFirings(pair).length < count && Date.now() - started < WAIT_SECONDS * 1000) await new Promise((r) => setTimeout(r, 200));
  const realSeconds = (Date.now() - started) / 1000;
  let simSeconds = 0;
  // A command syncs the simulator's timeline (the pass is an event on it).
  for (; simFirings(pair).length < count && simSeconds < WAIT_SECONDS; simSeconds++) {
    pair.sim.advance(1);
    await pair.sim.run(['strigger', '--get']);
  }
  return { realSeconds, simSeconds };
}

/** Both sides' answer to one command, the cluster's dir written as DIR. */
async function both(pair: Pair, argv: readonly string[]): Promise<{ real: string; sim: string }> {
  const show = (r: CommandResult) => `exit ${r.code}\n${r.stdout}${r.stderr}`.replaceAll(pair.real.cluster.dir, 'DIR').trimEnd();
  const [real, sim] = await Promise.all([pair.real.run(argv), pair.sim.run(argv)]);
  return { real: show(real), sim: show(sim) };
}

async function script(
  release: RealSlurmRelease,
): Promise<{ rows: DifferentialRow[]; latencies: Record<string, { real: number; sim: number }>; seconds: number }> {
  const started = Date.now();
  const pair = await startPair(release);
  const rows: DifferentialRow[] = [];
  const latencies: Record<string, { real: number; sim: number }> = {};
  const row = (operation: string, real: string, sim: string) =>
    rows.push({ scenario: `Slurm ${release}`, operation, slurm: real, simulator: sim, same: real === sim });
  const command = async (argv: string[]) => {
    const answer = await both(pair, argv);
    row(argv.join(' ').replaceAll(pair.real.cluster.dir, 'DIR'), answer.real, answer.sim);
  };
  const firings = async (operation: string, count: number) => {
    const waited = await awaitFirings(pair, count);
    latencies[operation] = { real: waited.realSeconds, sim: waited.simSeconds };
    // Sorted: slurmctld forks the programs of one pass one after the other, and which writes first is a race.
    row(`${operation}: firings`, realFirings(pair).sort().join('\n'), simFirings(pair).sort().join('\n'));
  };
  const p = pair.program;
  try {
    await command(['strigger', '--set', '--node=c01', '--drained', `--program=${p} drained-one`]);
    await command(['strigger', '--set', '--node=c[02-03]', '--drained', `--program=${p} drained-pair`]);
    await command(['strigger', '--set', '--node=c[01-02]', '--up', `--program=${p} up-perm`, '--flags=PERM']);
    await command(['strigger', '--set', '--node', '--down', `--program=${p} down-any`]);
    await command(['strigger', '--set', '--node', '--down', `--program=${p} down-any`]);
    await command(['strigger', '--get']);

    // An idle node drained: its one-shot trigger fires once, with its name, and leaves --get.
    await command(['scontrol', 'update', 'NodeName=c01', 'State=DRAIN', 'Reason=strigger test']);
    await firings('c01 drained while idle', 1);
    await command(['strigger', '--get']);

    // Two nodes drained by one command (within one pass): one run, one hostlist; and c04 set DOWN meanwhile:
    // the every-node down trigger fires with it alone (in list order, after the drained one).
    await command(['scontrol', 'update', 'NodeName=c[02-03]', 'State=DRAIN', 'Reason=strigger test']);
    await command(['scontrol', 'update', 'NodeName=c04', 'State=DOWN', 'Reason=strigger test']);
    await firings('c[02-03] drained at once, c04 down', 3);
    await command(['strigger', '--get']);

    // A reboot (no DOWN event: slurmctld sets DOWN+REBOOT_ISSUED itself) and the registration after it: up.
    await command(['scontrol', 'reboot', 'ASAP', 'nextstate=RESUME', 'reason=strigger test', 'c01']);
    await pair.real.settle((nodes) => nodes.find((n) => n.name === 'c01')?.base === 'IDLE' && !nodes.find((n) => n.name === 'c01')?.flags.includes('DRAIN'), {
      realSeconds: 30,
    });
    await firings('c01 rebooted and registered', 4);
    // The permanent trigger stays (its copy, first in slurmctld's list).
    await command(['strigger', '--get']);

    await command(['strigger', '--clear', '--id=99']);
    await command(['strigger', '--clear', '--id=3']);
    await command(['strigger', '--get']);
    await command(['strigger', '--set', '--node', '--down', `--program=${p} down-any`]);
    await command(['strigger', '--clear', '--user=root']);
    await command(['strigger', '--get']);
  } finally {
    await Promise.all([pair.real.stop(), pair.sim.stop()]);
  }
  return { rows, latencies, seconds: (Date.now() - started) / 1000 };
}

describeRealSlurm('strigger: the simulator against a real Slurm', (release) => {
  test('set, get, clear; a drained idle node, two nodes in one pass, a node set DOWN, a rebooted node up; one-shot and PERM', async () => {
    const { rows, latencies, seconds } = await script(release);
    console.log(
      `strigger differential, Slurm ${release}: ${seconds.toFixed(1)} s; firing latencies (s, real and simulated): ${JSON.stringify(latencies)}\n${differentialTable(rows)}`,
    );
    expect(differentialTable(rows.filter((r) => !r.same))).toEqual(differentialTable([]));
    // Each step's firings came within one pass of its change (16 s on the simulator's clock).
    for (const [operation, waited] of Object.entries(latencies))
      expect({ operation, real: waited.real <= FIRING_SECONDS, sim: waited.sim <= TRIGGER_PASS_MS / 1000 }).toEqual({ operation, real: true, sim: true });
  }, 180_000);
});
