import {
  applyDecision,
  approveWave,
  commitSchedule,
  proposeSchedule,
  recordOutcomes,
  schedule,
  type NodeObservation,
  type OperationOutcome,
  type ScheduleState,
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
 * running job ends (as the workload manager reports it), then out of service for `serviceSeconds`
 * (its reboot and return), every gate, cap, maintenance window and bake as the workflow applies
 * them, and approvals assumed given at once (said so).
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
  /** A node's time out of service once quiet: its reboot and return to the workload manager. */
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

export function planUpgrade({ request, plan, site, now, serviceSeconds, formatTime = (ms) => new Date(ms).toISOString() }: UpgradePlanInput): UpgradePlan {
  const policy = upgradePolicy(request, plan.length);
  let state: ScheduleState = commitSchedule(proposeSchedule(upgradeOperations(plan)));
  const jobEnd = (name: string): number | undefined => {
    const node = site.get(name);
    if (!node?.wlm) return undefined;
    if (node.wlm.base === 'IDLE' || isQuiet(node.wlm)) return now;
    return node.jobEndsAt;
  };
  const nodes: Record<string, PlannedNode> = {};
  const gates = new Map<string, Set<string>>(plan.map((name) => [name, new Set<string>()]));
  const unknownJobs: string[] = [];
  for (const name of plan) {
    const node = site.get(name);
    const wlm = node?.wlm;
    if (wlm?.flags.includes('DRAIN') && !isUpgradeDrainReason(wlm.reason))
      gates.get(name)!.add(`admin-drained${wlm.reason ? ` (${wlm.reason})` : ''}: no drain of ours, its drain is kept`);
    const end = jobEnd(name);
    if (wlm && end === undefined) {
      unknownJobs.push(name);
      gates.get(name)!.add('busy, job end unknown (counted as ending at once)');
    } else if (end !== undefined && end > now) gates.get(name)!.add(`busy until ${formatTime(end)}`);
  }
  const observe = (t: number): Record<string, NodeObservation> =>
    Object.fromEntries(
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

  const waves = new Map<number, PlannedWave>();
  const pendingWaits: string[] = [];
  const endsAt = new Map<string, number>();
  const leftAlone: Record<string, string> = {};
  let t = now;
  for (let decisions = 0; decisions < MAX_DECISIONS; decisions++) {
    // What ended by now is back in service.
    const ended = new Map<string, OperationOutcome>();
    for (const op of state.ops) if (op.state === 'TRANSITION' && op.holdsSlot && (endsAt.get(op.id) ?? Infinity) <= t) ended.set(op.id, { ok: true });
    state = recordOutcomes(state, ended, t);

    const observations = { nodes: observe(t) };
    const decision = schedule(state, policy, t, observations);
    if (decision.wait?.kind === 'approval') {
      pendingWaits.push(`approval of batch ${decision.wait.wave + 1} (assumed given at once)`);
      state = approveWave(state, decision.wait.wave);
      continue;
    }
    if (decision.wait?.kind === 'maintenance-window')
      pendingWaits.push(`maintenance window${decision.wait.until !== undefined ? ` until ${formatTime(decision.wait.until)}` : ' (none opens)'}`);
    if (decision.wait?.kind === 'bake') pendingWaits.push(`bake until ${formatTime(decision.wait.until)}`);
    state = applyDecision(state, decision, t);
    for (const { op } of decision.gated)
      leftAlone[upgradeOpNode(op)] = observations.nodes[upgradeOpNode(op)]?.alive === false ? 'node-not-alive' : 'node-unavailable';

    const admitted = [...decision.start.filter((s) => s.holdsSlot).map((s) => s.op), ...decision.admit];
    for (const { op } of decision.start) {
      const name = upgradeOpNode(op);
      const wave = decision.wave + 1;
      const planned = waves.get(wave) ?? { wave, startsAt: t, endsAt: t, nodes: [], waits: pendingWaits.splice(0) };
      planned.nodes.push(name);
      waves.set(wave, planned);
      nodes[name] = { wave, drainAt: t, outOfServiceAt: t, backAt: t, gates: [] };
    }
    for (const op of admitted) {
      const name = upgradeOpNode(op);
      const quietAt = Math.max(t, jobEnd(name) ?? t);
      const backAt = quietAt + serviceSeconds * 1000;
      endsAt.set(op, backAt);
      nodes[name] = { ...nodes[name]!, outOfServiceAt: quietAt, backAt };
      const wave = waves.get(nodes[name].wave)!;
      wave.endsAt = Math.max(wave.endsAt, backAt);
    }
    // Rack caps: a node waiting while its rack holds all the slots it may.
    if (policy.maxPerRack !== undefined && !decision.wait) {
      const holders = state.ops.filter((op) => op.state === 'TRANSITION' && op.holdsSlot);
      const perRack = new Map<string, number>();
      for (const op of holders) {
        const rack = observations.nodes[op.node]?.rack;
        if (rack !== undefined) perRack.set(rack, (perRack.get(rack) ?? 0) + 1);
      }
      for (const op of state.ops) {
        const rack = observations.nodes[op.node]?.rack;
        if (op.state === 'TODO' && rack !== undefined && (perRack.get(rack) ?? 0) >= policy.maxPerRack)
          gates.get(op.node)!.add(`waited for its rack ${rack} (cap ${policy.maxPerRack})`);
      }
    }
    if (decision.finished) break;

    // On to the next moment anything can change: a node back, a job ending (drain ahead), a window or bake.
    const next = Math.min(
      ...state.ops.filter((op) => op.state === 'TRANSITION' && op.holdsSlot).map((op) => endsAt.get(op.id) ?? Infinity),
      decision.recheckAt ?? Infinity,
    );
    if (!Number.isFinite(next)) {
      // Nothing in flight and nothing will change by itself (a maintenance window that never opens): what is left never starts.
      for (const op of state.ops)
        if (op.state === 'TODO') leftAlone[op.node] ??= decision.wait?.kind === 'maintenance-window' ? 'no maintenance window opens' : 'not started';
      break;
    }
    t = Math.max(next, t + (decision.start.length > 0 || ended.size > 0 ? 0 : 1000));
  }
  for (const [name, planned] of Object.entries(nodes)) planned.gates = [...gates.get(name)!];
  const orderedWaves = [...waves.values()].sort((a, b) => a.wave - b.wave);
  return {
    mode: request.mode,
    nodeCount: plan.length,
    cap: policy.maxInTransition,
    startsAt: now,
    endsAt: Math.max(now, ...orderedWaves.map((w) => w.endsAt)),
    waves: orderedWaves,
    nodes,
    leftAlone,
    assumptions: [
      `each node is out of service ${serviceSeconds} s once quiet (its reboot and return)`,
      'running jobs end when the workload manager says they will (their time limits): a job may end sooner',
      ...(unknownJobs.length > 0 ? [`${unknownJobs.length} busy node(s) whose job end the workload manager does not tell are counted as ending at once`] : []),
      ...(request.approval !== 'none' || request.pauseAfterBatches ? ['approvals are given as soon as they are asked for'] : []),
      'no node fails (a failure frees its slot sooner, and maxFailed may halt the run)',
    ],
  };
}
