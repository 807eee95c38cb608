import path from 'node:path';
import { spawn } from 'node:child_process';
import { BLANK_REASON, parseSiteMark } from '../../core/site/node-claims';
import { FailureReason } from '../../core/rolling-upgrade/session';
import { randomStream, type Random } from '../../simulator/seeded-random';
import type { RealNode, RealSlurmCluster } from '../../scripts/slurm/real-slurm';
import { clusterUpgradeArgs, writeLocalSlurmProfile } from '../../scripts/slurm/upgrade-on-cluster';
import type { Invariant, Violation } from './invariants';
import { knownItem, type ScenarioFacts } from './known-violations';

/**
 * Scenarios on a real Slurm (scripts/slurm/real-slurm.ts): what the local connectors do there
 * (`transport: local`, scontrol, slurm-reboot, the Slurm inventory), drawn from a seed: lock-step or
 * window with its cap and order, a busy node on a real job, an admin's drain, a node that never comes
 * back, and Ctrl-C or kill -9 then `session resume` at a random moment. Each runs `rollout upgrade`
 * as its own process, as an operator does, and is judged against what Slurm shows: the RebootProgram's
 * log, `scontrol show node` and the job's end in Slurm's job history, sinfo sampled while it runs.
 */
export interface RealScenario {
  seed: number;
  mode: 'lockstep' | 'window';
  stepSize: number;
  maxUnavailable?: number;
  order?: 'plan' | 'idle-first';
  busy?: { node: string; seconds: number };
  adminDrain?: { node: string; reason: string };
  neverReturns?: string;
  operator?: { kind: 'ctrl-c' | 'kill-resume'; afterMs: number };
}

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const int = (random: Random, min: number, max: number) => min + Math.floor(random() * (max - min + 1));

export function generateRealScenario(seed: number, nodes: readonly string[]): RealScenario {
  const random = randomStream(seed, 'real-slurm-scenario');
  const mode = random() < 0.5 ? 'lockstep' : 'window';
  const scenario: RealScenario = { seed, mode, stepSize: int(random, 1, nodes.length) };
  if (mode === 'window') {
    scenario.maxUnavailable = int(random, 1, 3);
    scenario.order = pick(random, ['plan', 'idle-first'] as const);
  }
  const free = [...nodes];
  const take = () => free.splice(Math.floor(random() * free.length), 1)[0]!;
  if (random() < 0.5) scenario.busy = { node: take(), seconds: int(random, 3, 15) };
  if (random() < 0.4) scenario.adminDrain = { node: take(), reason: pick(random, ['bad DIMM slot 3', 'hw: fan : replaced', 'ticket #4521']) };
  if (random() < 0.25) scenario.neverReturns = take();
  if (random() < 0.4) scenario.operator = { kind: pick(random, ['ctrl-c', 'kill-resume'] as const), afterMs: int(random, 1000, 8000) };
  return scenario;
}

export function describeRealScenario(s: RealScenario): string {
  return [
    `seed ${s.seed}: ${s.mode}${s.mode === 'lockstep' ? ` step ${s.stepSize}` : ` max-unavailable ${s.maxUnavailable} order ${s.order}`}`,
    s.busy ? `${s.busy.node} busy ${s.busy.seconds}s` : '',
    s.adminDrain ? `${s.adminDrain.node} admin '${s.adminDrain.reason}'` : '',
    s.neverReturns ? `${s.neverReturns} never returns` : '',
    s.operator ? `${s.operator.kind} after ${s.operator.afterMs} ms` : '',
  ]
    .filter(Boolean)
    .join('; ');
}

interface CliReport {
  upgradeId: string;
  state: string;
  completed: boolean;
  nodes: Record<string, { status: string; reason?: string }>;
}

export interface RealRun {
  scenario: RealScenario;
  exitCode: number | null;
  report?: CliReport;
  stderr: string;
  /** Reboots the RebootProgram ran during the scenario, per node, with their instants (epoch s). */
  reboots: Record<string, number[]>;
  /** The busy node's job end, from Slurm's job history (epoch s). */
  jobEnded?: number;
  nodes: RealNode[];
  /** Most nodes out of service at once as sinfo showed them: drained, down or rebooting (the admin's node apart; a failed node holds no slot). */
  peak: number;
  /** kill -9 or Ctrl-C came before the run had made a session: there is nothing to resume, and nothing may have been touched. */
  killedBeforeSession?: boolean;
}

const BIN = path.resolve('bin/rollout.js');

function rollout(
  cluster: RealSlurmCluster,
  args: string[],
): { kill: (signal: NodeJS.Signals) => void; done: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...cluster.env, CI: 'true' } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return { kill: (signal) => child.kill(signal), done: new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr }))) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs one scenario on the cluster (a profile of the local connectors is written into `dir`). */
export async function runRealScenario(cluster: RealSlurmCluster, scenario: RealScenario, dir: string): Promise<RealRun> {
  const profile = writeLocalSlurmProfile(dir);
  const dataDir = path.join(dir, `data-${scenario.seed}`);
  const before = cluster.rebootLog().length;
  let job: number | undefined;
  if (scenario.adminDrain) await cluster.scontrol('update', `NodeName=${scenario.adminDrain.node}`, 'State=DRAIN', `Reason=${scenario.adminDrain.reason}`);
  if (scenario.neverReturns) await cluster.setRebootBehaviour(scenario.neverReturns, 'never');
  if (scenario.busy) job = await cluster.submitJob(scenario.busy.node, { seconds: scenario.busy.seconds });
  // 45 s of wall time: a reboot of a few seconds, and a kill and resume of the rollout process, on a CI host whose
  // four test workers share two cores (at 30 s a loaded CI once saw a node rebooted once recorded boot-timed-out: seed 579187).
  const args = clusterUpgradeArgs(profile, [
    '--boot-timeout',
    '45',
    '--data-dir',
    dataDir,
    '--step-size',
    String(scenario.stepSize),
    ...(scenario.mode === 'window' ? ['--mode', 'window', '--max-unavailable', String(scenario.maxUnavailable), '--order', scenario.order!] : []),
  ]);
  const run = rollout(cluster, args);
  let peak = 0;
  let sampling = true;
  const samples = (async () => {
    while (sampling) {
      const listing = await cluster.tryRun('sinfo', ['-h', '-N', '-O', 'NodeList:0|,StateComplete:0|']);
      const out = listing.stdout
        .split('\n')
        .filter((line) => line && !line.startsWith(`${scenario.adminDrain?.node ?? '-'}|`) && /drain|down|reboot/.test(line.split('|')[1] ?? ''));
      peak = Math.max(peak, out.length);
      await sleep(500);
    }
  })();
  let result: { code: number | null; stdout: string; stderr: string };
  let killedBeforeSession = false;
  if (scenario.operator) {
    const ended = run.done.then(() => true);
    const raced = await Promise.race([ended, sleep(scenario.operator.afterMs).then(() => false)]);
    if (!raced) run.kill(scenario.operator.kind === 'ctrl-c' ? 'SIGINT' : 'SIGKILL');
    result = await run.done;
    // The sessions the killed or interrupted process left in its data directory (none: the dir was never made).
    const leftSessions = async (): Promise<{ id?: string; upgradeId?: string }[] | string> => {
      const list = await rollout(cluster, ['session', 'list', '--data-dir', dataDir, '--json']).done;
      if (list.code === 2 && /--data-dir .* does not exist/.test(list.stderr)) return [];
      if (list.code !== 0) return `session list after the ${scenario.operator!.kind} exited ${list.code}: ${list.stderr}`;
      return JSON.parse(list.stdout) as { id?: string; upgradeId?: string }[];
    };
    if (!raced && scenario.operator.kind === 'kill-resume') {
      const sessions = await leftSessions();
      if (typeof sessions === 'string') result = { ...result, stderr: `${result.stderr}\n${sessions}` };
      else if (sessions.length === 0) killedBeforeSession = true;
      else {
        const id = sessions[0]?.upgradeId ?? sessions[0]?.id;
        if (id) result = await rollout(cluster, ['session', 'resume', id, '--data-dir', dataDir, '--site-config', profile, '--json']).done;
      }
    }
    // A Ctrl-C while the CLI was still starting ends it by the signal itself (exit null, nothing printed): nothing may have begun.
    if (!raced && scenario.operator.kind === 'ctrl-c' && result.code === null && result.stdout.trim() === '') {
      const sessions = await leftSessions();
      if (Array.isArray(sessions) && sessions.length === 0) killedBeforeSession = true;
    }
  } else result = await run.done;
  sampling = false;
  await samples;
  let jobEnded: number | undefined;
  if (job !== undefined) {
    await cluster.waitForJob(job, (s) => s === undefined, 'ended', 60_000).catch(() => undefined);
    jobEnded = await cluster.jobEndTime(job);
  }
  // A node's slurmd may miss a ping on a loaded host (NOT_RESPONDING for a few seconds, unrelated to the run).
  const settle = Date.now() + 30_000;
  while ((await cluster.readNodes()).some((n) => n.flags.includes('NOT_RESPONDING') && n.name !== scenario.neverReturns) && Date.now() < settle)
    await sleep(500);
  const reboots: Record<string, number[]> = {};
  for (const entry of cluster.rebootLog().slice(before)) (reboots[entry.node] ??= []).push(entry.at);
  let report: CliReport | undefined;
  try {
    report = JSON.parse(result.stdout) as CliReport;
  } catch {
    report = undefined;
  }
  return {
    scenario,
    exitCode: result.code,
    ...(report ? { report } : {}),
    stderr: result.stderr,
    reboots,
    ...(jobEnded !== undefined ? { jobEnded } : {}),
    nodes: await cluster.readNodes(),
    peak,
    ...(killedBeforeSession ? { killedBeforeSession } : {}),
  };
}

/** The invariants of bench/scenarios/invariants.ts that a real Slurm lets us judge, against what it shows. */
export function checkRealRun(run: RealRun): Violation[] {
  const found: Violation[] = [];
  const add = (invariant: Invariant, text: string, node?: string) => found.push({ invariant, text, ...(node ? { node } : {}) });
  const { scenario, report } = run;
  if (!report && run.killedBeforeSession) {
    // Nothing was resumed: the site must show that nothing was done either (no reboot, no mark of a run, the admin's drain as written).
    for (const node of run.nodes) {
      const admin = scenario.adminDrain?.node === node.name ? scenario.adminDrain.reason : undefined;
      if ((run.reboots[node.name] ?? []).length > 0) add('not-started-untouched', 'rebooted by a run stopped before it made a session', node.name);
      if (admin !== undefined ? node.reason !== admin : parseSiteMark(node.reason) !== undefined)
        add('not-started-untouched', `a run stopped before it made a session left Slurm showing '${node.reason}'`, node.name);
    }
    return found;
  }
  if (!report) {
    add('run-error', `rollout printed no session (exit ${run.exitCode}): ${run.stderr.slice(-400)}`);
    return found;
  }
  const id = report.upgradeId;
  for (const node of run.nodes) {
    const record = report.nodes[node.name];
    const boots = run.reboots[node.name] ?? [];
    const admin = scenario.adminDrain?.node === node.name ? scenario.adminDrain.reason : undefined;
    const shows = `${[node.base, ...node.flags].join('+')} '${node.reason}', features [${node.features.join(',')}], rebooted ${boots.length}`;
    const mark = parseSiteMark(node.reason);
    if (admin !== undefined && record?.status !== 'FAILED' && (!node.flags.includes('DRAIN') || node.reason !== admin))
      add('admin-drain-kept', `the admin's drain '${admin}' not kept as written: Slurm shows ${shows}`, node.name);
    if (record?.status === 'UPGRADED') {
      if (boots.length !== 1) add('upgraded-rebooted-once', `recorded UPGRADED, rebooted ${boots.length} time(s) by the RebootProgram`, node.name);
      if (scenario.busy?.node === node.name && run.jobEnded !== undefined && boots.some((at) => at < run.jobEnded!))
        add('upgraded-after-last-job', `rebooted at ${boots.join(',')} before its job ended at ${run.jobEnded}`, node.name);
      if (admin === undefined && (node.flags.some((f) => ['DRAIN', 'FAIL'].includes(f)) || node.base === 'DOWN'))
        add('upgraded-back-in-service', `recorded UPGRADED but Slurm shows ${shows}`, node.name);
      if (mark?.runId === id) add('no-claim-left', `recorded UPGRADED but its reason names the session: ${shows}`, node.name);
      if (node.features.includes('failed') || node.features.includes('upgrading')) add('upgraded-back-in-service', `recorded UPGRADED but ${shows}`, node.name);
    } else if (record?.status === 'FAILED') {
      const reason = record.reason ?? '';
      if (
        !node.reason.startsWith(reason) ||
        !node.features.includes('failed') ||
        !(node.flags.includes('FAIL') || node.flags.includes('DRAIN') || node.base === 'DOWN')
      )
        add('failed-as-site-shows', `recorded FAILED (${reason}) but Slurm shows ${shows}`, node.name);
      const siteCaused =
        scenario.neverReturns === node.name && [FailureReason.bootTimeout, FailureReason.bootFailed, FailureReason.wlmTimeout].includes(reason as never);
      if (!siteCaused)
        add(
          'failure-is-the-sites',
          `recorded FAILED (${reason}), which nothing at the site caused (rebooted ${boots.length}): the control plane's own fault`,
          node.name,
        );
    } else {
      if (boots.length > 0) add('not-started-untouched', `recorded ${record?.status ?? 'nothing'} but rebooted ${boots.length} time(s)`, node.name);
      if (admin === undefined && node.flags.includes('DRAIN'))
        add('not-started-untouched', `recorded ${record?.status ?? 'nothing'} but left drained: ${shows}`, node.name);
    }
    if (mark?.claim && mark.runId === id) add('site-left-clean', `still claimed by the ended session: ${shows}`, node.name);
    if (node.features.includes('upgrading')) add('site-left-clean', `still in the upgrading group: ${shows}`, node.name);
  }
  const cap = scenario.mode === 'window' ? scenario.maxUnavailable! : scenario.stepSize;
  // The node that never returns stays out of service once failed: it holds no slot then, but sinfo still counts it.
  const allowance = scenario.neverReturns ? 1 : 0;
  if (run.peak > cap + allowance) add('cap-held', `${run.peak} nodes out of service at once as sinfo showed them, over the cap of ${cap}`);
  const stopped = scenario.operator?.kind === 'ctrl-c' && report.state === 'STOPPED';
  if (scenario.operator?.kind === 'ctrl-c' && !['STOPPED', 'READY'].includes(report.state))
    add('stop-ends-stopped', `Ctrl-C, but the session ended ${report.state}`);
  // A Ctrl-C that lands as the run ends, after the CLI stopped listening, ends the process by the signal (no exit code): interrupted, not a verdict.
  const interrupted = run.exitCode === null && scenario.operator?.kind === 'ctrl-c';
  if (!interrupted && (run.exitCode === 0) !== report.completed)
    add('exit-status-agrees', `exit ${run.exitCode} with the session ${report.state}, completed ${report.completed}`);
  if (!stopped && !['READY', 'HALTED'].includes(report.state)) add('no-session-left-running', `the process ended with the session ${report.state}`);
  return found;
}

export function realFacts(scenario: RealScenario): ScenarioFacts {
  return {
    bootService: 'slurm-reboot',
    mode: scenario.mode,
    adminReasons: scenario.adminDrain ? { [scenario.adminDrain.node]: scenario.adminDrain.reason } : {},
    neverOpeningWindow: false,
    gates: false,
  };
}

/** Splits a run's violations into findings and known bugs. */
export function judgeRealRun(run: RealRun): { violations: Violation[]; known: (Violation & { item: number | string })[] } {
  const violations: Violation[] = [];
  const known: (Violation & { item: number | string })[] = [];
  for (const v of checkRealRun(run)) {
    const item = knownItem(realFacts(run.scenario), v);
    if (item === undefined) violations.push(v);
    else known.push({ ...v, item });
  }
  return { violations, known };
}

/** Puts the cluster back as the scenario found it: the job gone, reboots normal, every node idle with no reason, in no group of ours. */
export async function restoreCluster(cluster: RealSlurmCluster, scenario: RealScenario): Promise<void> {
  if (scenario.neverReturns) {
    await cluster.setRebootBehaviour(scenario.neverReturns, 'normal');
    if (!cluster.slurmdRuns(scenario.neverReturns)) await cluster.startSlurmd(scenario.neverReturns, { booted: true });
  }
  for (const node of await cluster.readNodes()) {
    if (node.flags.includes('DRAIN') || node.flags.includes('FAIL') || node.base === 'DOWN')
      await cluster.tryRun('scontrol', ['update', `NodeName=${node.name}`, 'State=RESUME']);
    if (node.features.length > 0) await cluster.tryRun('scontrol', ['update', `NodeName=${node.name}`, 'AvailableFeatures=', 'ActiveFeatures=']);
  }
  await cluster.waitForNodes((nodes) => nodes.every((n) => n.base === 'IDLE' && n.flags.length === 0), 'every node idle again', 90_000);
  // From 24.11 a RESUME keeps the node's reason (22.05 clears it; seen on both): a mark of this seed's session left on an
  // idle node was read as the next seed's doing (seed 404030, after a Ctrl-C before its session existed).
  for (const node of await cluster.readNodes())
    if (node.reason.trim() !== '') await cluster.tryRun('scontrol', ['update', `NodeName=${node.name}`, `Reason=${BLANK_REASON}`]);
}
