import { writeFileSync } from 'node:fs';
import { describeRealSlurm } from '../support/describe-real-slurm';
import { type RealNode, type RealSlurmOptions, type RealSlurmRelease, shortSlurmdTimeout } from '../../scripts/slurm/real-slurm';
import {
  describeNode,
  differentialTable,
  RealSide,
  SimulatedSide,
  type CommandResult,
  type DifferentialRow,
  type SlurmSide,
} from '../support/slurm-differential';
import type { SiteDefinitionInput } from '../../simulator/site-file';

/**
 * The simulator's Slurm against a real one: the same operations on a real cluster (Debian's Slurm,
 * one slurmd per node on this machine) and on the simulator's head node (what the SSM and local
 * transports execute), each node's base state, flags, reason and features compared after every step.
 * The simulator runs the installed release's rules (`slurm.version`). Differences that stay are listed,
 * with why, in simulator/README.md and in KNOWN_DIFFERENCES here; any other fails the test.
 * DIFFERENTIAL_TABLE=<file> writes the table (operation by operation) there.
 */

/**
 * `scenario: operation` (on every release) or `<release> scenario: operation` (on that one) → why the simulator
 * differs there (simulator/README.md "Differences from Slurm").
 */
const KNOWN_DIFFERENCES: Record<string, string> = Object.fromEntries(
  (['24.11', '26.05'] as const).flatMap((release) => {
    const v = release === '24.11' ? 'v0.0.42' : 'v0.0.45';
    return [
      [
        `${release} 8 nodes, ReturnToService=1: slurmrestd: GET /slurm/${v}/nodes`,
        "the simulator's slurmrestd answers v0.0.40 and later with the node fields the connectors read (6), not the release's every field",
      ],
      [
        `${release} 8 nodes, ReturnToService=1: slurmrestd: GET /slurm/${v}/node/c01`,
        "the simulator's slurmrestd answers v0.0.40 and later with the node fields the connectors read (6), not the release's every field",
      ],
    ];
  }),
);

const knownDifference = (release: RealSlurmRelease, row: DifferentialRow): string | undefined =>
  KNOWN_DIFFERENCES[`${release} ${row.scenario}: ${row.operation}`] ?? KNOWN_DIFFERENCES[`${row.scenario}: ${row.operation}`];

const FEATURES = ['role:Compute', 'compute'];

type Step = {
  operation: string;
  act: (side: SlurmSide) => Promise<CommandResult | void>;
  /** What to wait for on each side before comparing (default: every node whose slurmd runs answers). */
  until?: (nodes: RealNode[], bootsBefore: ReadonlyMap<string, number>) => boolean;
  realSeconds?: number;
  simSeconds?: number;
  /** The nodes the table shows (every node is compared). */
  show: string[];
};

const node = (nodes: RealNode[], name: string) => nodes.find((n) => n.name === name);
const has = (name: string, flag: string) => (nodes: RealNode[]) => node(nodes, name)?.flags.includes(flag) ?? false;
const not = (check: (nodes: RealNode[]) => boolean) => (nodes: RealNode[]) => !check(nodes);
const both =
  (...checks: ((nodes: RealNode[]) => boolean)[]) =>
  (nodes: RealNode[]) =>
    checks.every((check) => check(nodes));
const isDown = (name: string) => (nodes: RealNode[]) => node(nodes, name)?.base === 'DOWN';
/**
 * The node's slurmd registered a boot newer than it had before the step (the margin as in Scenario.step's "new
 * BootTime"): what to wait for after a boot, rather than for a flag that may not have been set yet.
 */
const booted = (name: string) => (nodes: RealNode[], before: ReadonlyMap<string, number>) => (node(nodes, name)?.bootTime ?? 0) > (before.get(name) ?? 0) + 2;
/** No reboot pending and slurmd answering. */
const rebootDone = (name: string) => both(not(has(name, 'REBOOT_REQUESTED')), not(has(name, 'REBOOT_ISSUED')), not(has(name, 'NOT_RESPONDING')));
const scontrol =
  (...args: string[]) =>
  (side: SlurmSide) =>
    side.run(['scontrol', ...args]);

function nodeNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `c${String(i + 1).padStart(2, '0')}`);
}

/** A real cluster and a simulated site with the same nodes, features and Slurm settings. */
async function pair(
  release: RealSlurmRelease,
  count: number,
  slurm: { returnToService: 0 | 1 | 2; slurmdTimeout: number; resumeTimeout: number },
  extra: { real?: Partial<RealSlurmOptions>; site?: Partial<SiteDefinitionInput> } = {},
) {
  const names = nodeNames(count);
  const real = await RealSide.start({
    release,
    nodes: count,
    returnToService: slurm.returnToService,
    slurmdTimeout: slurm.slurmdTimeout,
    resumeTimeout: slurm.resumeTimeout,
    rebootDelaySeconds: 1,
    features: Object.fromEntries(names.map((n) => [n, FEATURES])),
    restd: false,
    ...extra.real,
  });
  const site: SiteDefinitionInput = {
    nodes: names.map((name, i) => ({ name, nid: i + 1 })),
    groups: { compute: names },
    bootTemplates: ['img-2'],
    timing: { bootSeconds: 1, returnSeconds: 1 },
    slurm: {
      version: real.cluster.version,
      returnToService: slurm.returnToService,
      slurmdTimeoutSeconds: slurm.slurmdTimeout,
      resumeTimeoutSeconds: slurm.resumeTimeout,
      accountingStorage: 'none',
    },
    ...extra.site,
  };
  const sim = await SimulatedSide.start(site);
  return { real, sim };
}

/** Runs steps on both sides, one row each; `stopped` are nodes whose slurmd is meant to be down. */
class Scenario {
  readonly rows: DifferentialRow[] = [];
  readonly stopped = new Set<string>();

  constructor(
    readonly name: string,
    readonly real: SlurmSide,
    readonly sim: SlurmSide,
  ) {}

  /**
   * The latest BootTime seen of each node, per side: a RESUME zeroes it until slurmd registers again
   * (node_mgr.c _require_node_reg), which may happen steps later, with the same boot.
   */
  private readonly boots = new Map<SlurmSide, Map<string, number>>();

  private bootsOf(side: SlurmSide, nodes: RealNode[]): Map<string, number> {
    const seen = this.boots.get(side) ?? new Map<string, number>();
    for (const n of nodes) seen.set(n.name, Math.max(seen.get(n.name) ?? 0, n.bootTime));
    this.boots.set(side, seen);
    return seen;
  }

  async step(step: Step): Promise<void> {
    const bootTimes = async (side: SlurmSide) => new Map(this.bootsOf(side, await side.nodes()));
    const [realBoots, simBoots] = await Promise.all([bootTimes(this.real), bootTimes(this.sim)]);
    const realBootsBefore = this.real.bootsRecorded?.();
    const [realResult, simResult] = await Promise.all([step.act(this.real), step.act(this.sim)]);
    const until = step.until ?? ((nodes: RealNode[]) => nodes.every((n) => this.stopped.has(n.name) || !n.flags.includes('NOT_RESPONDING')));
    // The real budgets only cost time when a step fails (settle returns as soon as its condition holds): a loaded
    // host delays slurmd's registrations and their retries (1, 2, 4, 8... s apart) by seconds, not by a minute.
    // 15 simulated seconds: 26.05 issues a reboot at its next power-save pass, up to 10 s later (slurm-version.ts).
    const limits = { realSeconds: step.realSeconds ?? 60, simSeconds: step.simSeconds ?? 15 };
    const [realSettled, simSettled] = await Promise.all([
      this.real.settle((nodes) => until(nodes, realBoots), limits),
      this.sim.settle((nodes) => until(nodes, simBoots), limits),
    ]);
    if (!realSettled) {
      const nodes = (await this.real.nodes()).map((n) => `${n.name} ${describeNode(n)}`).join('; ');
      throw new Error(`${this.name}: ${step.operation}: the real Slurm never got there in ${limits.realSeconds} s: ${nodes}\n${this.real.diagnose(step.show)}`);
    }
    const [realNodes, simNodes] = await Promise.all([this.real.nodes(), this.sim.nodes()]);
    // A reboot shows as a new BootTime (the clocks differ, so only "it moved" is compared). slurmd derives a boot it
    // did not make from /proc/uptime, which can move it by a second when it registers again: a reboot moves it more.
    const rebooted = (nodes: RealNode[], before: Map<string, number>) =>
      new Set(nodes.filter((n) => n.bootTime > (before.get(n.name) ?? 0) + 2).map((n) => n.name));
    // On the real side a new BootTime counts as a reboot only when the site's record shows one in the step (the
    // RebootProgram's log, or a boot the step made): slurmd started with -b (after a reboot) reports a fresh boot again
    // when a reconfigure restarts it (23.11 and later), and a loaded slurmctld may read a registration seconds late
    // (boot = now - uptime); neither is a reboot (both seen on 24.11 under load).
    const realBootsAfter = this.real.bootsRecorded?.();
    const restarted = (name: string) =>
      realBootsBefore === undefined || realBootsAfter === undefined || (realBootsAfter.get(name) ?? 0) > (realBootsBefore.get(name) ?? 0);
    const realRebooted = new Set([...rebooted(realNodes, realBoots)].filter(restarted));
    const simRebooted = rebooted(simNodes, simBoots);
    this.bootsOf(this.real, realNodes);
    this.bootsOf(this.sim, simNodes);
    const describe = (n: RealNode | undefined, booted: Set<string>) => `${describeNode(n)}${n && booted.has(n.name) ? ' (new BootTime)' : ''}`;
    const differing = realNodes.filter((n) => describe(n, realRebooted) !== describe(node(simNodes, n.name), simRebooted));
    const exitCodesDiffer = (realResult?.code ?? 0) !== (simResult?.code ?? 0);
    const shown = [...new Set([...step.show, ...differing.map((n) => n.name)])];
    const cell = (nodes: RealNode[], booted: Set<string>, result: CommandResult | void, settled: boolean) =>
      [
        ...(result && result.code !== 0 ? [`exit ${result.code}: ${result.stderr.trim().split('\n')[0]}`] : []),
        ...shown.map((name) => `${name} ${describe(node(nodes, name), booted)}`),
        ...(settled ? [] : ['(did not settle)']),
      ].join('\n');
    this.rows.push({
      scenario: this.name,
      operation: step.operation,
      slurm: cell(realNodes, realRebooted, realResult, true),
      simulator: cell(simNodes, simRebooted, simResult, simSettled),
      same: differing.length === 0 && !exitCodesDiffer,
    });
  }

  /** A row comparing what a command prints on both sides, through `normalize` (what may differ: hardware, times). */
  async output(operation: string, argv: string[], normalize: (stdout: string) => string = (x) => x): Promise<void> {
    const [real, sim] = await Promise.all([this.real.run(argv), this.sim.run(argv)]);
    const text = (r: CommandResult) => `exit ${r.code}\n${normalize(r.stdout).trim()}${r.stderr.trim() ? `\n${r.stderr.trim()}` : ''}`;
    this.fact(operation, text(real), text(sim));
  }

  /** A row of facts that are not node states (slurmrestd's answers). */
  fact(operation: string, slurm: string, simulator: string): void {
    this.rows.push({ scenario: this.name, operation, slurm, simulator, same: slurm === simulator });
  }

  /** Set when a step failed: the real cluster's dir (its logs) is kept then, and the error names it. */
  failed = false;

  async stop(): Promise<void> {
    await Promise.all([this.real.stop({ keep: this.failed }), this.sim.stop()]);
  }
}

/** Drains, jobs, reboots with and without nextstate, resume, fail, features, reconfigure, a controller restart, slurmrestd. */
async function mainScript(release: RealSlurmRelease): Promise<DifferentialRow[]> {
  // ResumeTimeout past every wait for a reboot (90 s): a slow reboot fails its step, saying so, instead of becoming a "reboot timed out" DOWN.
  const { real, sim } = await pair(release, 8, { returnToService: 1, slurmdTimeout: 30, resumeTimeout: 120 }, { real: { restd: true } });
  const s = new Scenario('8 nodes, ReturnToService=1', real, sim);
  const jobs = new Map<SlurmSide, number>();
  try {
    await s.step({
      operation: 'drain an idle node (our reason): scontrol update NodeName=c01 State=DRAIN Reason=rolling-upgrade',
      act: scontrol('update', 'NodeName=c01', 'State=DRAIN', 'Reason=rolling-upgrade'),
      show: ['c01'],
    });
    await s.step({ operation: 'a real job on c02 (sbatch -w c02)', act: async (side) => void jobs.set(side, await side.submitJob('c02', 600)), show: ['c02'] });
    await s.step({ operation: 'drain the busy node', act: scontrol('update', 'NodeName=c02', 'State=DRAIN', 'Reason=rolling-upgrade'), show: ['c02'] });
    await s.step({
      operation: "an admin's drain with its own reason",
      act: scontrol('update', 'NodeName=c03', 'State=DRAIN', 'Reason=admin: bad dimm'),
      show: ['c03'],
    });
    await s.step({
      operation: 'scontrol reboot ASAP nextstate=RESUME reason=rolling-upgrade on the admin-drained c03, until it registered',
      act: scontrol('reboot', 'ASAP', 'nextstate=RESUME', 'reason=rolling-upgrade', 'c03'),
      until: rebootDone('c03'),
      realSeconds: 90,
      show: ['c03'],
    });
    await s.step({
      operation: 'scontrol reboot ASAP reason=rolling-upgrade (no nextstate) on the idle, undrained c04, until it registered',
      act: scontrol('reboot', 'ASAP', 'reason=rolling-upgrade', 'c04'),
      until: rebootDone('c04'),
      realSeconds: 90,
      show: ['c04'],
    });
    await s.step({
      operation: 'scontrol reboot ASAP nextstate=RESUME on the busy, drained c02: it waits for the job',
      act: scontrol('reboot', 'ASAP', 'nextstate=RESUME', 'reason=rolling-upgrade', 'c02'),
      show: ['c02'],
    });
    await s.output("sinfo -h -N -O 'NodeList:0|,StateComplete:0|,Reason:0' (the connectors' compact poll)", [
      'sinfo',
      '-h',
      '-N',
      '-n',
      'c0[1-4],nope',
      '-O',
      'NodeList:0|,StateComplete:0|,Reason:0',
    ]);
    await s.output(
      'env SLURM_TIME_FORMAT=%s scontrol -o show node c0[1-3],nope: NodeName, features, State and Reason of each line',
      ['env', 'SLURM_TIME_FORMAT=%s', 'scontrol', '-o', 'show', 'node', 'c0[1-3],nope'],
      (stdout) =>
        stdout
          .split('\n')
          .map((line) =>
            line.startsWith('NodeName=')
              ? ['NodeName', 'AvailableFeatures', 'ActiveFeatures', 'State'].map((key) => new RegExp(`(?:^| )(${key}=\\S*)`).exec(line)?.[1]).join(' ') +
                (/ Reason=(.*) \[root@\d+\]$/.exec(line) ? ` Reason=${/ Reason=(.*) \[root@\d+\]$/.exec(line)![1]}` : '')
              : line,
          )
          .join('\n'),
    );
    await s.step({
      operation: 'scancel the job on c02, until the reboot it waited for is done',
      act: (side) => side.run(['scancel', String(jobs.get(side))]),
      until: rebootDone('c02'),
      realSeconds: 90,
      simSeconds: 25,
      show: ['c02'],
    });
    await s.step({
      operation: 'scontrol reboot nextstate=RESUME (not ASAP) on our drained c01, until it registered',
      act: scontrol('reboot', 'nextstate=RESUME', 'c01'),
      until: rebootDone('c01'),
      realSeconds: 90,
      show: ['c01'],
    });
    await s.step({ operation: "an admin's drain on c05", act: scontrol('update', 'NodeName=c05', 'State=DRAIN', 'Reason=admin: keep drained'), show: ['c05'] });
    await s.step({
      operation: 'scontrol reboot ASAP reason=rolling-upgrade (no nextstate) on the drained c05, until it registered',
      act: scontrol('reboot', 'ASAP', 'reason=rolling-upgrade', 'c05'),
      until: rebootDone('c05'),
      realSeconds: 90,
      show: ['c05'],
    });
    await s.step({
      operation: 'scontrol reboot nextstate=DOWN reason=rolling-upgrade on c06, until it registered',
      act: scontrol('reboot', 'nextstate=DOWN', 'reason=rolling-upgrade', 'c06'),
      until: rebootDone('c06'),
      realSeconds: 90,
      show: ['c06'],
    });
    await s.step({ operation: 'resume the DOWN c06', act: scontrol('update', 'NodeName=c06', 'State=RESUME'), show: ['c06'] });
    await s.step({ operation: 'resume c04, which is neither drained nor down', act: scontrol('update', 'NodeName=c04', 'State=RESUME'), show: ['c04'] });
    await s.step({
      operation: 'fail c05: scontrol update State=FAIL Reason=upgrading-boot-session-failed',
      act: scontrol('update', 'NodeName=c05', 'State=FAIL', 'Reason=upgrading-boot-session-failed'),
      show: ['c05'],
    });
    await s.step({ operation: 'resume the failed c05', act: scontrol('update', 'NodeName=c05', 'State=RESUME'), show: ['c05'] });
    await s.step({
      operation: 'a job on c07, drained with a reason',
      act: async (side) => (await side.submitJob('c07', 600), side.run(['scontrol', 'update', 'NodeName=c07', 'State=DRAIN', 'Reason=keep me'])),
      show: ['c07'],
    });
    await s.step({ operation: 'resume the busy, drained c07: does the reason stay?', act: scontrol('update', 'NodeName=c07', 'State=RESUME'), show: ['c07'] });
    await s.step({
      operation: 'feature edit: scontrol update NodeName=c08 AvailableFeatures=role:Compute,compute,upgrading ActiveFeatures=role:Compute,compute,upgrading',
      act: scontrol('update', 'NodeName=c08', 'AvailableFeatures=role:Compute,compute,upgrading', 'ActiveFeatures=role:Compute,compute,upgrading'),
      show: ['c08'],
    });
    await s.step({
      operation: 'AvailableFeatures=role:Compute,compute,failed alone (the active ones are no longer a subset)',
      act: scontrol('update', 'NodeName=c08', 'AvailableFeatures=role:Compute,compute,failed'),
      show: ['c08'],
    });
    // From 23.11 a reconfigure restarts slurmctld: its nodes show UNKNOWN until they register again (seen on 26.05.5).
    await s.step({
      operation: 'scontrol reconfigure',
      act: scontrol('reconfigure'),
      until: (nodes) => nodes.every((n) => n.base !== 'UNKNOWN' && !n.flags.includes('NOT_RESPONDING')),
      realSeconds: 90,
      show: ['c08'],
    });
    await s.step({
      operation: 'feature edit again, then slurmctld restarts',
      act: async (side) => (
        await side.run(['scontrol', 'update', 'NodeName=c08', 'AvailableFeatures=role:Compute,compute,failed', 'ActiveFeatures=role:Compute,compute,failed']),
        side.restartController()
      ),
      until: (nodes) => nodes.every((n) => n.base !== 'UNKNOWN' && !n.flags.includes('NOT_RESPONDING')),
      realSeconds: 90,
      show: ['c08'],
    });

    // slurmrestd: the versions, an unknown node, a node update.
    const versions = [real.restdVersions.join(', '), sim.restdVersions.join(', ')];
    s.fact('slurmrestd: the openapi versions served', versions[0]!, versions[1]!);
    const newest = real.restdVersions.at(-1)!;
    const answer = async (side: SlurmSide, method: 'GET' | 'POST', path: string, body?: unknown) => {
      const { status, body: parsed, text } = await side.restd(method, path, body);
      if (typeof parsed !== 'object' || parsed === null) return `${status}: ${text.trim()}`;
      const record = parsed as { errors?: { error?: string }[]; nodes?: Record<string, unknown>[] };
      const nodes =
        record.nodes === undefined ? 'no nodes' : `${record.nodes.length} nodes${record.nodes[0] ? ` with ${Object.keys(record.nodes[0]).length} fields` : ''}`;
      return `${status}: errors ${JSON.stringify((record.errors ?? []).map((e) => e.error))}, ${nodes}`;
    };
    for (const [operation, method, path, body] of [
      [`GET /slurm/${newest}/nodes`, 'GET', `/slurm/${newest}/nodes`],
      [`GET /slurm/${newest}/node/c01`, 'GET', `/slurm/${newest}/node/c01`],
      [`GET /slurm/${newest}/node/nope (an unknown node)`, 'GET', `/slurm/${newest}/node/nope`],
      [`POST /slurm/${newest}/node/c01 {"state": ["DRAIN"]} (a node update)`, 'POST', `/slurm/${newest}/node/c01`, { state: ['DRAIN'], reason: 'rest drain' }],
    ] as [string, 'GET' | 'POST', string, unknown?][]) {
      s.fact(`slurmrestd: ${operation}`, await answer(real, method, path, body), await answer(sim, method, path, body));
    }
    return s.rows;
  } catch (err) {
    s.failed = true;
    throw err;
  } finally {
    await s.stop();
  }
}

/** A reboot through another service (the boot service, not Slurm) that outlasts SlurmdTimeout, and one that does not, under ReturnToService 0, 1 or 2. */
async function outOfBandReboots(release: RealSlurmRelease, rts: 0 | 1 | 2): Promise<DifferentialRow[]> {
  const slurmdTimeout = shortSlurmdTimeout(release);
  const { real, sim } = await pair(release, 2, { returnToService: rts, slurmdTimeout, resumeTimeout: 60 });
  const s = new Scenario(`ReturnToService=${rts}, SlurmdTimeout=${slurmdTimeout}`, real, sim);
  try {
    await s.step({ operation: 'drain c01 (our reason)', act: scontrol('update', 'NodeName=c01', 'State=DRAIN', 'Reason=rolling-upgrade'), show: ['c01'] });
    s.stopped.add('c01');
    await s.step({
      operation: 'c01 reboots through the boot service and stays down past SlurmdTimeout',
      act: (side) => side.stopNode('c01'),
      until: isDown('c01'),
      realSeconds: 60 + slurmdTimeout,
      simSeconds: 4 + slurmdTimeout,
      show: ['c01'],
    });
    s.stopped.delete('c01');
    await s.step({
      operation: 'c01 boots and its slurmd registers',
      act: (side) => side.startNode('c01'),
      until: not(has('c01', 'NOT_RESPONDING')),
      realSeconds: 60,
      show: ['c01'],
    });
    await s.step({
      operation: 'c02 (in service) reboots through the boot service and is back within SlurmdTimeout',
      act: async (side) => {
        await side.stopNode('c02');
        if (side instanceof SimulatedSide) side.advance(1);
        else await new Promise((resolve) => setTimeout(resolve, 1000));
        await side.startNode('c02');
      },
      // slurmd registers a moment after it started (as after a real boot): until then c02 has been gone too briefly to be NOT_RESPONDING.
      until: (nodes, before) => booted('c02')(nodes, before) && !has('c02', 'NOT_RESPONDING')(nodes),
      show: ['c02'],
    });
    return s.rows;
  } catch (err) {
    s.failed = true;
    throw err;
  } finally {
    await s.stop();
  }
}

/** A `scontrol reboot` whose node never comes back: ResumeTimeout (slurmctld checks it every 30 s). */
async function rebootNeverBack(release: RealSlurmRelease): Promise<DifferentialRow[]> {
  const { real, sim } = await pair(
    release,
    2,
    { returnToService: 1, slurmdTimeout: 30, resumeTimeout: 5 },
    { site: { nodes: nodeNames(2).map((name, i) => ({ name, nid: i + 1, ...(name === 'c01' ? { faults: { returnToService: 'never' as const } } : {}) })) } },
  );
  await (real as RealSide).cluster.setRebootBehaviour('c01', 'never');
  const s = new Scenario('ResumeTimeout=5, ReturnToService=1', real, sim);
  try {
    await s.step({ operation: 'drain c01 (our reason)', act: scontrol('update', 'NodeName=c01', 'State=DRAIN', 'Reason=rolling-upgrade'), show: ['c01'] });
    s.stopped.add('c01');
    await s.step({
      operation: 'scontrol reboot ASAP nextstate=RESUME on c01, which never comes back, until ResumeTimeout',
      act: scontrol('reboot', 'ASAP', 'nextstate=RESUME', 'reason=rolling-upgrade', 'c01'),
      until: both(not(has('c01', 'REBOOT_ISSUED')), not(has('c01', 'REBOOT_REQUESTED')), has('c01', 'NOT_RESPONDING')),
      realSeconds: 120,
      simSeconds: 30,
      show: ['c01'],
    });
    return s.rows;
  } catch (err) {
    s.failed = true;
    throw err;
  } finally {
    await s.stop();
  }
}

/**
 * COMPLETING: the node's Epilog runs after its job; a drain and a reboot meanwhile. The simulator's Epilog
 * lasts 5 simulated seconds (its clock stands still between steps); the real one is held until the step
 * that ends it releases it: a few seconds of wall time could run out between two steps on a loaded host.
 */
async function epilog(release: RealSlurmRelease): Promise<DifferentialRow[]> {
  const { real, sim } = await pair(
    release,
    2,
    { returnToService: 1, slurmdTimeout: 30, resumeTimeout: 120 },
    { site: { timing: { bootSeconds: 1, returnSeconds: 1, epilogSeconds: 5 } } },
  );
  for (const name of nodeNames(2)) await (real as RealSide).cluster.holdEpilog(name);
  const endEpilog = (name: string) => async (side: SlurmSide) => {
    if (side instanceof RealSide) side.cluster.releaseEpilog(name);
  };
  const s = new Scenario('Epilog of 5 s', real, sim);
  try {
    await s.step({
      operation: 'a 1 s job on c01, until its Epilog runs',
      act: async (side) => void (await side.submitJob('c01', 1)),
      until: has('c01', 'COMPLETING'),
      realSeconds: 60,
      simSeconds: 5,
      show: ['c01'],
    });
    await s.step({ operation: 'drain c01 during its Epilog', act: scontrol('update', 'NodeName=c01', 'State=DRAIN', 'Reason=rolling-upgrade'), show: ['c01'] });
    await s.step({ operation: 'the Epilog ends', act: endEpilog('c01'), until: not(has('c01', 'COMPLETING')), realSeconds: 60, simSeconds: 10, show: ['c01'] });
    await s.step({
      operation: 'a 1 s job on c02, until its Epilog runs',
      act: async (side) => void (await side.submitJob('c02', 1)),
      until: has('c02', 'COMPLETING'),
      realSeconds: 60,
      simSeconds: 5,
      show: ['c02'],
    });
    await s.step({
      operation: 'scontrol reboot ASAP nextstate=RESUME on c02 during its Epilog',
      act: scontrol('reboot', 'ASAP', 'nextstate=RESUME', 'reason=rolling-upgrade', 'c02'),
      show: ['c02'],
    });
    await s.step({
      operation: '...until the reboot is done',
      act: endEpilog('c02'),
      until: both(not(has('c02', 'COMPLETING')), rebootDone('c02')),
      realSeconds: 90,
      simSeconds: 25,
      show: ['c02'],
    });
    return s.rows;
  } catch (err) {
    s.failed = true;
    throw err;
  } finally {
    await s.stop();
  }
}

describeRealSlurm('the simulated Slurm against a real Slurm on this machine, step by step', (release) => {
  // Every scenario starts at once: each has its own cluster and simulator, and most of their time is waiting.
  let started: Record<string, Promise<DifferentialRow[]>> = {};
  const allRows: DifferentialRow[][] = [];

  beforeAll(() => {
    started = {
      main: mainScript(release),
      rts0: outOfBandReboots(release, 0),
      rts1: outOfBandReboots(release, 1),
      rts2: outOfBandReboots(release, 2),
      never: rebootNeverBack(release),
      epilog: epilog(release),
    };
    // Rejections are awaited by the tests; none is left unhandled meanwhile.
    for (const run of Object.values(started)) run.catch(() => {});
  });

  afterAll(() => {
    const table = differentialTable(allRows.flat());
    if (process.env.DIFFERENTIAL_TABLE) writeFileSync(process.env.DIFFERENTIAL_TABLE, `${table}\n`);
  });

  const check = async (key: string) => {
    const rows = await started[key]!;
    allRows.push(rows);
    const unexpected = rows.filter((row) => !row.same && knownDifference(release, row) === undefined);
    const fixed = rows.filter((row) => row.same && knownDifference(release, row) !== undefined);
    expect({ unexpected: differentialTable(unexpected), fixed: fixed.map((r) => `${r.scenario}: ${r.operation}`) }).toEqual({
      unexpected: differentialTable([]),
      fixed: [],
    });
  };

  test('drains, jobs, reboots with and without nextstate, resume, fail, features, reconfigure, a restart, slurmrestd', () => check('main'), 240_000);
  test('a boot-service reboot past SlurmdTimeout, ReturnToService=0', () => check('rts0'), 240_000);
  test('a boot-service reboot past SlurmdTimeout, ReturnToService=1', () => check('rts1'), 240_000);
  test('a boot-service reboot past SlurmdTimeout, ReturnToService=2', () => check('rts2'), 240_000);
  test('a scontrol reboot that never comes back: ResumeTimeout', () => check('never'), 240_000);
  test('COMPLETING is a flag: the Epilog after a job, a drain and a reboot meanwhile', () => check('epilog'), 240_000);
});
