import {
  applyDecision,
  approveWave,
  commitSchedule,
  countPerRack,
  proposeSchedule,
  rackHasRoom,
  recordOutcomes,
  schedule,
  type Decision,
  type NodeObservation,
  type Observations,
  type OperationOutcome,
  type ScheduleState,
  type SchedulingPolicy,
} from '../scheduling';
import type { WlmNode } from '../site/site-nodes';
import { isUpgradeDrainReason } from '../site/node-claims';
import { upgradeOperations, upgradeOpNode, upgradePolicy } from './upgrade-policy';
import type { UpgradeRequest } from './upgrade-request';
import { isQuiet } from './wlm-readiness';

/**
 * `rollout plan upgrade`: which nodes go in which step (lock-step) or wave (window), when each wave
 * should start and end, and what holds each node back, without touching anything. It is the
 * workflow's own scheduler (core/scheduling with the request's policy, as the window's increments
 * and lock-step's steps use it) run forward on the site as it is now: each node busy until its
 * running job ends (as the workload manager reports it), then out of service (drained and idle)
 * until its boot (lock-step: its step's, once the slowest node is quiet) and `serviceSeconds` more
 * (its reboot and return), each change seen at the run's next poll, every gate, cap, maintenance
 * window and bake as the workflow applies them, and approvals assumed given at once (said so).
 */

/** What the site says of a node of the plan now. */
export interface PlannedNodeSite {
  wlm?: WlmNode;
  alive: boolean;
  available: boolean;
  rack?: string;
  /** When its running job ends (epoch ms), where the workload manager tells. */
  jobEndsAt?: number;
}

export interface UpgradePlanInput {
  request: UpgradeRequest;
  /** The starting group's members, in plan order. */
  plan: readonly string[];
  site: ReadonlyMap<string, PlannedNodeSite>;
  /** The site's clock now, epoch ms. */
  now: number;
  /** From a node's boot to its return to the workload manager: its reboot and return. */
  serviceSeconds: number;
  /** How an instant reads in the gates' and waits' words (default ISO). */
  formatTime?: (ms: number) => string;
}

export interface PlannedNode {
  /** 1-based step (lock-step) or wave (window). */
  wave: number;
  /** Epoch ms: drained (its start), out of service (quiet: drained and idle), back in service. */
  drainAt: number;
  outOfServiceAt: number;
  backAt: number;
  /** What holds it back, or shapes its timing: busy until, admin-drained, rack cap, ... */
  gates: string[];
}

export interface PlannedWave {
  wave: number;
  startsAt: number;
  endsAt: number;
  nodes: string[];
  /** What it waited for before it could start: approval, bake, maintenance window. */
  waits: string[];
}

export interface UpgradePlan {
  mode: UpgradeRequest['mode'];
  nodeCount: number;
  /** Nodes out of service at once at most: the step size, or maxUnavailable resolved. */
  cap: number;
  startsAt: number;
  endsAt: number;
  waves: PlannedWave[];
  nodes: Record<string, PlannedNode>;
  /** Nodes that would never start, and why (not alive, unavailable). */
  leftAlone: Record<string, string>;
  /** What the estimate rests on. */
  assumptions: string[];
}

/** Decisions the projection may take at most (each moves the clock on, so a plan always ends). */
const MAX_DECISIONS = 1_000_000;

/** When a node's running job ends (epoch ms): now when it is idle or quiet, the workload manager's word when busy, undefined when it does not tell. */
type JobEnd = (name: string) => number | undefined;

function jobEndOf(site: UpgradePlanInput['site'], now: number): JobEnd {
  return (name) => {
    const node = site.get(name);
    if (!node?.wlm) return undefined;
    if (node.wlm.base === 'IDLE' || isQuiet(node.wlm)) return now;
    return node.jobEndsAt;
  };
}

/** What holds each node back, or shapes its timing, before the projection runs: an admin's drain, a busy node; and the busy nodes whose job end is not told. */
function siteGates(
  { plan, site, now, formatTime }: Pick<UpgradePlanInput, 'plan' | 'site' | 'now'> & { formatTime: (ms: number) => string },
  jobEnd: JobEnd,
): { gates: Map<string, Set<string>>; unknownJobs: string[] } {
  const gates = new Map<string, Set<string>>(plan.map((name) => [name, new Set<string>()]));
  const unknownJobs: string[] = [];
  for (const name of plan) {
    const wlm = site.get(name)?.wlm;
    if (wlm?.flags.includes('DRAIN') && !isUpgradeDrainReason(wlm.reason))
      gates.get(name)!.add(`admin-drained${wlm.reason ? ` (${wlm.reason})` : ''}: no drain of ours, its drain is kept`);
    const end = jobEnd(name);
    if (wlm && end === undefined) {
      unknownJobs.push(name);
      gates.get(name)!.add('busy, job end unknown (counted as ending at once)');
    } else if (end !== undefined && end > now) gates.get(name)!.add(`busy until ${formatTime(end)}`);
  }
  return { gates, unknownJobs };
}

/** What the scheduler sees of the plan's nodes at `t`: the site as it is now, each running job counted down to its end. */
function observationsAt(plan: readonly string[], site: UpgradePlanInput['site'], jobEnd: JobEnd, t: number): Record<string, NodeObservation> {
  return Object.fromEntries(
    plan.map((name) => {
      const node = site.get(name);
      const end = jobEnd(name) ?? t;
      return [
        name,
        {
          alive: node?.wlm !== undefined && node.alive,
          available: node?.available !== false,
          ...(node?.rack !== undefined ? { rack: node.rack } : {}),
          remainingJobSeconds: Math.max(0, (end - t) / 1000),
        },
      ];
    }),
  );
}

/** How long the run takes over a node once it starts, as the projection counts it. */
interface PlanTiming {
  jobEnd: JobEnd;
  /** A node's reboot and return, from its boot. */
  serviceMs: number;
  /** The run's poll interval: it sees a node quiet, booted or back at a poll. */
  pollMs: number;
  /** Lock-step: a step boots together, once its slowest node is quiet. */
  together: boolean;
}

/** The projection as it runs: the schedule, and what it found so far. */
interface Projection {
  state: ScheduleState;
  nodes: Record<string, PlannedNode>;
  gates: Map<string, Set<string>>;
  waves: Map<number, PlannedWave>;
  /** Waits met since the last wave opened: the next wave to open waited for them. */
  pendingWaits: string[];
  /** When each op admitted to a slot is back in service. */
  endsAt: Map<string, number>;
  leftAlone: Record<string, string>;
}

/** A decision's wait, in the plan's words (an approval is assumed given, and said so by the caller). */
function noteWait(decision: Decision, pendingWaits: string[], formatTime: (ms: number) => string): void {
  if (decision.wait?.kind === 'maintenance-window')
    pendingWaits.push(`maintenance window${decision.wait.until !== undefined ? ` until ${formatTime(decision.wait.until)}` : ' (none opens)'}`);
  if (decision.wait?.kind === 'bake') pendingWaits.push(`bake until ${formatTime(decision.wait.until)}`);
}

/** `ms` past `from`, rounded up to the run's polls: the workflow sees a change at its next poll, not when it happens. */
function atPoll(from: number, ms: number, pollMs: number): number {
  return from + (pollMs > 0 ? Math.ceil(Math.max(0, ms) / pollMs) * pollMs : Math.max(0, ms));
}

/**
 * The nodes a decision starts join their wave (drained at `t`); those admitted to a slot are out of
 * service once quiet (drained and idle, the site's own word for it), and back once rebooted and
 * returned. Lock-step boots a step together, at the first poll that finds its slowest node quiet
 * (statemachines/rolling-upgrade.asl.json: Check Quiesce, then Boot Step Nodes), so every node of
 * the step is back at the same moment and a node quiet early waits, out of service, for the rest.
 * Window boots each node at the first increment that finds it quiet.
 */
function placeStarts(projection: Projection, decision: Decision, t: number, timing: PlanTiming): void {
  const { jobEnd, serviceMs, pollMs, together } = timing;
  const admitted = [...decision.start.filter((s) => s.holdsSlot).map((s) => s.op), ...decision.admit];
  for (const { op } of decision.start) {
    const name = upgradeOpNode(op);
    const wave = decision.wave + 1;
    const planned = projection.waves.get(wave) ?? { wave, startsAt: t, endsAt: t, nodes: [], waits: projection.pendingWaits.splice(0) };
    planned.nodes.push(name);
    projection.waves.set(wave, planned);
    projection.nodes[name] = { wave, drainAt: t, outOfServiceAt: t, backAt: t, gates: [] };
  }
  const quietAt = new Map(admitted.map((op) => [op, Math.max(t, jobEnd(upgradeOpNode(op)) ?? t)]));
  const lastQuiet = Math.max(t, ...quietAt.values());
  for (const op of admitted) {
    const name = upgradeOpNode(op);
    const bootAt = atPoll(t, (together ? lastQuiet : quietAt.get(op)!) - t, pollMs);
    const backAt = atPoll(bootAt, serviceMs, pollMs);
    projection.endsAt.set(op, backAt);
    projection.nodes[name] = { ...projection.nodes[name]!, outOfServiceAt: quietAt.get(op)!, backAt };
    const wave = projection.waves.get(projection.nodes[name].wave)!;
    wave.endsAt = Math.max(wave.endsAt, backAt);
  }
}

/** Rack caps: a node waiting while its rack holds all the slots it may. */
function noteRackWaits(projection: Projection, policy: SchedulingPolicy, decision: Decision, observations: Observations): void {
  if (policy.maxPerRack === undefined || decision.wait) return;
  const holders = projection.state.ops.filter((op) => op.state === 'TRANSITION' && op.holdsSlot).map((op) => op.node);
  const perRack = countPerRack(holders, (node) => observations.nodes[node]?.rack);
  for (const op of projection.state.ops) {
    const rack = observations.nodes[op.node]?.rack;
    if (op.state === 'TODO' && rack !== undefined && !rackHasRoom(policy, perRack, rack))
      projection.gates.get(op.node)!.add(`waited for its rack ${rack} (cap ${policy.maxPerRack})`);
  }
}

/** The next moment anything can change: a node back, a job ending (drain ahead), a window or bake; Infinity when nothing will by itself. */
function nextMoment(projection: Projection, decision: Decision): number {
  return Math.min(
    ...projection.state.ops.filter((op) => op.state === 'TRANSITION' && op.holdsSlot).map((op) => projection.endsAt.get(op.id) ?? Infinity),
    decision.recheckAt ?? Infinity,
  );
}

/** Runs the scheduler forward from `now`, decision after decision, each at the next moment anything can change, until the run finishes. */
function project(input: UpgradePlanInput & { formatTime: (ms: number) => string }, policy: SchedulingPolicy, timing: PlanTiming, projection: Projection): void {
  const { plan, site, now, formatTime } = input;
  const { jobEnd } = timing;
  let t = now;
  for (let decisions = 0; decisions < MAX_DECISIONS; decisions++) {
    // What ended by now is back in service.
    const ended = new Map<string, OperationOutcome>();
    for (const op of projection.state.ops)
      if (op.state === 'TRANSITION' && op.holdsSlot && (projection.endsAt.get(op.id) ?? Infinity) <= t) ended.set(op.id, { ok: true });
    projection.state = recordOutcomes(projection.state, ended, t);

    const observations = { nodes: observationsAt(plan, site, jobEnd, t) };
    const decision = schedule(projection.state, policy, t, observations);
    if (decision.wait?.kind === 'approval') {
      projection.pendingWaits.push(`approval of batch ${decision.wait.wave + 1} (assumed given at once)`);
      projection.state = approveWave(projection.state, decision.wait.wave);
      continue;
    }
    noteWait(decision, projection.pendingWaits, formatTime);
    projection.state = applyDecision(projection.state, decision, t);
    for (const { op } of decision.gated)
      projection.leftAlone[upgradeOpNode(op)] = observations.nodes[upgradeOpNode(op)]?.alive === false ? 'node-not-alive' : 'node-unavailable';
    placeStarts(projection, decision, t, timing);
    noteRackWaits(projection, policy, decision, observations);
    if (decision.finished) return;

    const next = nextMoment(projection, decision);
    if (!Number.isFinite(next)) {
      // Nothing in flight and nothing will change by itself (a maintenance window that never opens): what is left never starts.
      for (const op of projection.state.ops)
        if (op.state === 'TODO') projection.leftAlone[op.node] ??= decision.wait?.kind === 'maintenance-window' ? 'no maintenance window opens' : 'not started';
      return;
    }
    t = Math.max(next, t + (decision.start.length > 0 || ended.size > 0 ? 0 : 1000));
  }
}

/** What the estimate rests on. */
function assumptionsOf(request: UpgradeRequest, serviceSeconds: number, unknownJobs: readonly string[]): string[] {
  return [
    `each node is back ${serviceSeconds} s after its boot starts (its reboot and return)`,
    request.mode === 'lockstep'
      ? 'a step boots together once its slowest node is quiet: a node quiet sooner stays out of service until then'
      : 'each node boots once it is quiet',
    `the run sees a node quiet, booted and back at its next poll (every ${request.pollIntervalSeconds} s)`,
    'running jobs end when the workload manager says they will (their time limits): a job may end sooner',
    ...(unknownJobs.length > 0 ? [`${unknownJobs.length} busy node(s) whose job end the workload manager does not tell are counted as ending at once`] : []),
    ...(request.approval !== 'none' || request.pauseAfterBatches ? ['approvals are given as soon as they are asked for'] : []),
    'no node fails (a failure frees its slot sooner, and maxFailed may halt the run)',
  ];
}

export function planUpgrade(given: UpgradePlanInput): UpgradePlan {
  const input = { ...given, formatTime: given.formatTime ?? ((ms: number) => new Date(ms).toISOString()) };
  const { request, plan, now, serviceSeconds } = input;
  const policy = upgradePolicy(request, plan.length);
  const jobEnd = jobEndOf(input.site, now);
  const { gates, unknownJobs } = siteGates(input, jobEnd);
  const projection: Projection = {
    state: commitSchedule(proposeSchedule(upgradeOperations(plan))),
    nodes: {},
    gates,
    waves: new Map(),
    pendingWaits: [],
    endsAt: new Map(),
    leftAlone: {},
  };
  const timing: PlanTiming = {
    jobEnd,
    serviceMs: serviceSeconds * 1000,
    pollMs: request.pollIntervalSeconds * 1000,
    together: policy.admission === 'together',
  };
  project(input, policy, timing, projection);
  for (const [name, planned] of Object.entries(projection.nodes)) planned.gates = [...gates.get(name)!];
  const waves = [...projection.waves.values()].sort((a, b) => a.wave - b.wave);
  return {
    mode: request.mode,
    nodeCount: plan.length,
    cap: policy.maxInTransition,
    startsAt: now,
    endsAt: Math.max(now, ...waves.map((w) => w.endsAt)),
    waves,
    nodes: projection.nodes,
    leftAlone: projection.leftAlone,
    assumptions: assumptionsOf(request, serviceSeconds, unknownJobs),
  };
}
