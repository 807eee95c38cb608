import type { MaintenanceWindow } from './maintenance-windows';

/**
 * How the annealer may start operations. Everything is counted in ops; a rolling upgrade has one
 * op per node, so its counts are nodes. Built from a request by the workflow's policy builders
 * (core/rolling-upgrade/upgrade-policy.ts) or, for task graphs, from the role groups' strategies.
 *
 * Ops start in waves (Ansible `serial` batches, CRUS steps): wave k admits at most `waveSize(k)`
 * ops, and wave k+1 opens only once no op of wave k is in TRANSITION, after `bakeSeconds` and, where
 * asked, an operator's approval.
 */
export interface SchedulingPolicy {
  /**
   * `together`: a wave's ops start at once, only when nothing is in TRANSITION, and no op joins the
   * wave later (CRUS lock-step). `refill`: ops start one by one whenever a slot frees (the window).
   */
  admission: 'together' | 'refill';
  /** Sizes of the first waves, in ops. */
  waveSizes: number[];
  /** After `waveSizes`: the last size repeats (lock-step steps) or one last wave takes every remaining op. */
  afterWaves: 'repeat-last' | 'one-wave';
  /** Global cap: ops holding a slot at once (maxUnavailable; OpenCrowbar's 10 background jobs). */
  maxInTransition: number;
  /**
   * Ops started ahead without a slot (a rolling upgrade drains their nodes, whose jobs finish while
   * the window works). They take a slot when admitted; only busy nodes are started ahead.
   */
  drainAhead: number;
  /**
   * The longest the caller may take to decide again (the poll interval). A node drained ahead must
   * have a slot when its job ends: one whose job may end before the next decision is admitted now, or
   * given back to service if no slot is free. So only nodes whose job surely runs longer than this
   * are drained ahead.
   */
  aheadHorizonSeconds: number;
  /** Which candidate takes a free slot first: plan order, or the shortest remaining job (idle first). */
  order: 'plan' | 'idle-first';
  /** Cap on slot holders per rack (racks from the observations; a node without a rack is not capped). */
  maxPerRack?: number;
  /** Cap on slot holders per op group (issue 10: one_by_one = 1, parallel amount N = N; absent = no cap). */
  groupLimits?: Readonly<Record<string, number>>;
  /** 0-based waves that start only after an operator's approval; `every` = each wave after the first. */
  approvalBeforeWaves: 'every' | readonly number[];
  /** Wait after a wave's last op ended before the next wave starts. */
  bakeSeconds: number;
  /** Halt once more nodes than this have an op in ERROR (absent: never halt on failures). */
  maxFailedNodes?: number;
  /** Halt when a node outside the plan goes DOWN or FAIL during the run. */
  haltOnOutsideFailures: boolean;
  /** When non-empty, new ops start (and drained-ahead ones are admitted) only inside one of these windows. */
  maintenanceWindows: readonly MaintenanceWindow[];
}

/** Policy defaults: one wave of everything, no caps but the global one, no gates beyond alive/available. */
export function basePolicy(overrides: Partial<SchedulingPolicy> & Pick<SchedulingPolicy, 'maxInTransition'>): SchedulingPolicy {
  return {
    admission: 'refill',
    waveSizes: [],
    afterWaves: 'one-wave',
    drainAhead: 0,
    aheadHorizonSeconds: 0,
    order: 'plan',
    approvalBeforeWaves: [],
    bakeSeconds: 0,
    haltOnOutsideFailures: false,
    maintenanceWindows: [],
    ...overrides,
  };
}

/** Size of wave `wave` (0-based); Infinity for the one last wave. */
export function waveSize(policy: Pick<SchedulingPolicy, 'waveSizes' | 'afterWaves'>, wave: number): number {
  if (wave < policy.waveSizes.length) return policy.waveSizes[wave]!;
  if (policy.afterWaves === 'repeat-last') return policy.waveSizes.at(-1) ?? Infinity;
  return Infinity;
}

export function needsApproval(policy: Pick<SchedulingPolicy, 'approvalBeforeWaves'>, wave: number): boolean {
  return policy.approvalBeforeWaves === 'every' ? wave >= 1 : policy.approvalBeforeWaves.includes(wave);
}

/** A count, or a share of `total` written `"20%"`: rounded down, at least `min` (Ansible's `serial` and Kubernetes' maxUnavailable round down). */
export function resolveCount(value: number | string, total: number, min = 1): number {
  if (typeof value === 'number') return value;
  const percent = Number(value.slice(0, -1));
  return Math.max(min, Math.floor((total * percent) / 100));
}
