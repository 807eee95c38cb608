import {
  applyDecision,
  approveWave,
  commitSchedule,
  proposeSchedule,
  recordOutcome,
  schedule,
  type Decision,
  type Observations,
  type OperationSpec,
  type ScheduleState,
  type SchedulingPolicy,
} from '../../core/scheduling';

/** A node of the tiny pure site the scheduler tests drive: its job, its work, its fate. */
export interface ModelNode {
  name: string;
  rack?: string;
  /** Seconds left on its job at the start (0: idle). While not drained it stays busy until then. */
  jobSeconds: number;
  /** Seconds left to its job's time limit at the start (at least jobSeconds; default jobSeconds): what `jobEnds: 'limit'` reports. */
  jobLimitSeconds?: number;
  /** Seconds an op holds its slot once the node is idle (boot + return). */
  workSeconds: number;
  fails: boolean;
  /** [fromSecond, toSecond) intervals in which the node is unavailable. */
  unavailable?: [number, number][];
  alive?: boolean;
}

export const START = Date.UTC(2026, 0, 1);

export interface DriveResult {
  state: ScheduleState;
  decisions: { at: number; decision: Decision; before: ScheduleState; after: ScheduleState }[];
}

/**
 * Runs `schedule` + `applyDecision` to the end against the model, approving waits for approval at
 * once (or after `approvalDelaySeconds`), and jumping time to the next event. Throws if the run
 * does not finish within `maxPasses`.
 */
export function drive(
  nodes: readonly ModelNode[],
  policy: SchedulingPolicy,
  /** `jobEnds: 'limit'`: the scheduler sees each job's limit as its end, an upper bound, as Slurm reports it (default `exact`: the true end, known to hold). */
  options: { specs?: OperationSpec[]; approvalDelaySeconds?: number; outsideFailureAt?: number; maxPasses?: number; jobEnds?: 'exact' | 'limit' } = {},
): DriveResult {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const specs = options.specs ?? nodes.map((n) => ({ id: `${n.name}/upgrade`, node: n.name }));
  let state = commitSchedule(proposeSchedule(specs));
  const decisions: DriveResult['decisions'] = [];
  /** Op id -> when its work ends (set once the node is idle and holds a slot). */
  const workEnds = new Map<string, number>();
  let now = START;
  let approvalPendingSince: number | undefined;

  const available = (n: ModelNode, t: number) => !(n.unavailable ?? []).some(([a, b]) => t >= START + a * 1000 && t < START + b * 1000);
  const jobEnd = (n: ModelNode) => START + n.jobSeconds * 1000;

  for (let pass = 0; pass < (options.maxPasses ?? 5000); pass++) {
    // Work that ended by now reports its outcome.
    for (const [opId, end] of [...workEnds]) {
      if (end > now) continue;
      workEnds.delete(opId);
      const op = state.ops.find((o) => o.id === opId)!;
      state = recordOutcome(state, opId, byName.get(op.node)!.fails ? { ok: false, error: 'boot-failed' } : { ok: true }, now);
    }
    const observations: Observations = {
      nodes: Object.fromEntries(
        nodes.map((n) => [
          n.name,
          {
            alive: n.alive ?? true,
            available: available(n, now),
            rack: n.rack,
            ...(options.jobEnds === 'limit'
              ? { remainingJobSeconds: jobEnd(n) > now ? Math.max(0, START / 1000 + (n.jobLimitSeconds ?? n.jobSeconds) - now / 1000) : 0 }
              : { remainingJobSeconds: Math.max(0, (jobEnd(n) - now) / 1000), minRemainingJobSeconds: Math.max(0, (jobEnd(n) - now) / 1000) }),
          },
        ]),
      ),
      outsideFailures: options.outsideFailureAt !== undefined && now >= START + options.outsideFailureAt * 1000 ? ['outsider'] : [],
    };
    const decision = schedule(state, policy, now, observations);
    const before = state;
    state = applyDecision(state, decision, now);
    decisions.push({ at: now, decision, before, after: state });
    if (decision.finished) return { state, decisions };

    if (decision.wait?.kind === 'approval') {
      approvalPendingSince ??= now;
      const due = approvalPendingSince + (options.approvalDelaySeconds ?? 0) * 1000;
      if (now >= due) {
        state = approveWave(state, decision.wait.wave);
        approvalPendingSince = undefined;
        continue;
      }
    }
    // Slot holders on idle nodes start their work.
    for (const op of state.ops) {
      if (op.state !== 'TRANSITION' || !op.holdsSlot || workEnds.has(op.id)) continue;
      const n = byName.get(op.node)!;
      workEnds.set(op.id, Math.max(now, jobEnd(n)) + n.workSeconds * 1000);
    }
    // Next event: a work end, a job end, an availability change, a recheck, the approval, the outside failure.
    const candidates = [
      ...workEnds.values(),
      ...nodes.map(jobEnd),
      ...nodes.flatMap((n) => (n.unavailable ?? []).flat().map((s) => START + s * 1000)),
      decision.recheckAt ?? Infinity,
      approvalPendingSince !== undefined ? approvalPendingSince + (options.approvalDelaySeconds ?? 0) * 1000 : Infinity,
      options.outsideFailureAt !== undefined ? START + options.outsideFailureAt * 1000 : Infinity,
    ].filter((t) => t > now);
    const next = Math.min(...candidates);
    if (!Number.isFinite(next)) throw new Error(`the run is stuck at ${(now - START) / 1000} s: ${JSON.stringify(decision)}`);
    now = next;
  }
  throw new Error('the run did not finish');
}
