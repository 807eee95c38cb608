import type { SiteEventKind } from '../site/site-event';
import { shortList } from '../text';
import { describeError, EmptyBootSessionError, type RolloutError } from '../errors';
import { retryDelaySeconds } from './deletion-rules';
import { stepHeading, stepText } from './step-plan';
import type { BootLimit, BootSessionStatus, WlmNode } from '../site/site-nodes';
import { siteReasonProblem } from '../site/names';
import { claimantOf, failureMark, HELD_BY_ANOTHER_CONTROL_PLANE, isClaimOf, isFailureReason, isUpgradeDrainReason } from '../site/node-claims';
import { reasonAsSet, type NodeRecord, type Progress, type SessionState, type Stage, type UpgradeSession } from './session';

/**
 * What an activity does to the site and the store, as data. The activity layer performs them in
 * order; each is safe to perform again (a retried increment decides again from what it observes).
 */
export type NodeAction =
  /** Save progress before an action that must not be repeated blind (the boot time before the boot). */
  | { type: 'saveProgress'; expected: Pick<Progress, 'step' | 'stage'>; progress: Progress }
  | { type: 'drain'; nodes: string[]; reason: string }
  | { type: 'resume'; nodes: string[] }
  /** `State=FAIL Reason=<siteReason>` in the workload manager: CRUS's `reason` (what records and events carry), marked with the session. */
  | { type: 'fail'; nodes: string[]; reason: string; siteReason: string }
  | { type: 'addToGroup'; label: string; nodes: string[] }
  | { type: 'removeFromGroup'; label: string; nodes: string[] }
  | { type: 'startBoot'; name: string; template: string; limit: BootLimit }
  | { type: 'recordNodes'; records: NodeRecord[] }
  /**
   * Starts `command` (with `{node}` the node's quoted name) on the site's command transport for each
   * record, then records it with the command's id (phase CHECKING, `check.startedAt` as given).
   */
  | { type: 'startHealthChecks'; command: string; timeoutSeconds: number; records: NodeRecord[] }
  | { type: 'releaseLocks'; nodes: string[] }
  | { type: 'closeSession'; state: SessionState; completed: boolean };

/** How a wait for the site may be resumed by its events (StageOutcome.siteWait). */
export interface SiteWait {
  recheckSeconds?: number;
  /** Nodes draining are waited for: Slurm's `drained` (their jobs ended) or `down`. */
  quiesce?: boolean;
  afterBoot?: boolean;
  commandEnd?: boolean;
}

/**
 * The site events that can end a wait: `drained` and `down` for nodes draining, `up` and `down` for nodes booting
 * or returning, `command` for a health check's end; undefined (any) for a wait that says none. A firing of another
 * kind (a node's own drain firing while it reboots) leaves the parked workflow parked.
 */
export function siteWaitEvents(wait: SiteWait): SiteEventKind[] | undefined {
  const events = new Set<SiteEventKind>();
  if (wait.quiesce) for (const kind of ['drained', 'down'] as const) events.add(kind);
  if (wait.afterBoot) for (const kind of ['up', 'down'] as const) events.add(kind);
  if (wait.commandEnd) events.add('command');
  return events.size > 0 ? [...events].sort() : undefined;
}

/** What one stage increment decided: the next progress, how long to wait, what to tell the operator, what to do. */
export interface StageOutcome {
  progress: Progress;
  /** Seconds to wait before the next attempt (polling); 0 to go on at once. */
  waitSeconds: number;
  /** Nothing can move until the operator acts (approve, resume): the workflow parks on a task token instead of polling. */
  waitForOperator?: boolean;
  /**
   * The wait is for the site's nodes to change (drained, back, down): with the session's triggers armed, a firing
   * resumes it, and the poll becomes the backstop. `recheckSeconds`: when the decision changes by itself (a
   * timeout running out), which the wait must not outlast. `afterBoot`: a node booting or returning after its boot
   * is waited for: Slurm fires `up` for it only after `scontrol reboot` (or a node that was DOWN). `commandEnd`: a
   * health check runs on the site's command transport, whose end is not a Slurm event: the wait parks only when the
   * transport notifies each command's end (CommandTransport.notifiesCommandEnd), else it stays a poll.
   */
  siteWait?: SiteWait;
  message?: string;
}

export interface StageDecision extends StageOutcome {
  actions: NodeAction[];
  /** The increment cannot go on: after its actions, the attempt fails with this error (and is retried with backoff). */
  error?: RolloutError;
}

/** What every stage decision is given: the session, its stored progress, the nodes it works on, the time. */
export interface StageInput<Observed> {
  session: UpgradeSession;
  progress: Progress;
  /** The nodes the stage works on (the step's, or the cancel chunk's), with their records. */
  nodes: readonly NodeRecord[];
  observed: Observed;
  now: number;
}

/** An attempt of `stage` failed: count it, tell the operator, and retry after a backoff instead of failing the execution. */
export function decideFailedAttempt(session: UpgradeSession, stage: Stage, progress: Progress, err: unknown): StageOutcome & { message: string } {
  const failed: Progress = { ...progress, errorCount: progress.errorCount + 1 };
  // `step 1`, without `of N`: the step count appears once the plan is taken, which may happen between two
  // attempts, and the same failure must read the same to be said once.
  const where = session.mode === 'window' ? 'the window' : stepText(progress.step, 0);
  return {
    progress: failed,
    waitSeconds: retryDelaySeconds(failed.errorCount, session.pollIntervalSeconds),
    message: `Processing ${where} in stage ${stage} failed - ${describeError(err)}`,
  };
}

/**
 * A boot session that ended having acted upon no node at all (BOS's session setup when no node of
 * its limit is left: "No nodes were found to act upon.", Cray-HPE/bos session_setup.py): the run's
 * error, said and retried, never a failure of the nodes it was meant for (nothing booted them).
 */
export function emptyBootSession(boot: BootSessionStatus | undefined): EmptyBootSessionError | undefined {
  if (!boot || boot.status !== 'complete' || Object.keys(boot.nodes).length > 0) return undefined;
  return new EmptyBootSessionError(
    'boot-service',
    boot.name,
    boot.error ? `the boot service says: ${boot.error}` : 'the boot service acted upon none of its nodes',
  );
}

/** Progress for the start of `stage` at `step`. */
export function enterStage(stage: Stage, step: number, now: number, carry: Partial<Progress> = {}): Progress {
  return { ...carry, step, stage, stageStartedAt: now, errorCount: 0 };
}

/** On to the next step at once. */
export function nextStep(step: number, now: number, actions: NodeAction[] = [], message?: string): StageDecision {
  return { progress: enterStage('STARTING', step + 1, now), waitSeconds: 0, actions, ...(message ? { message } : {}) };
}

/** Nodes still being worked on (not yet upgraded or failed, and not lost to another session). */
export function activeNodes(records: readonly NodeRecord[]): NodeRecord[] {
  return records.filter((r) => (r.status === 'IN_PROGRESS' || r.status === 'NOT_STARTED') && r.phase !== 'LOCK_LOST');
}

/** The fencing token of each node this session holds the lock of (node → token). */
export function heldLocks(records: readonly NodeRecord[]): Map<string, number> {
  return new Map(records.filter((r) => r.lockToken !== undefined).map((r) => [r.name, r.lockToken!]));
}

/** Where a decision applies: the window, or a lock-step step (0-based, of how many). */
export type StepWhere = 'window' | { step: number; stepCount: number };

const whereHeading = (where: StepWhere): string => (where === 'window' ? 'Window' : stepHeading(where.step, where.stepCount));

/**
 * Nodes whose lock the session lost (its lease ran out and another session took them over): they
 * are no longer ours. Recorded as lost, keeping the status we last knew, and said once; nothing is
 * done to them (the holder decides their fate).
 */
export function decideLocksLost(
  step: StepWhere,
  nodes: readonly NodeRecord[],
  holders: ReadonlyMap<string, string | undefined>,
): { actions: NodeAction[]; message: string } | undefined {
  const lost = nodes.filter((n) => holders.has(n.name));
  if (lost.length === 0) return undefined;
  const records: NodeRecord[] = lost.map((n) => {
    const holder = holders.get(n.name);
    return { name: n.name, index: n.index, status: n.status, phase: 'LOCK_LOST', reason: holder ? `lock-lost-to-${holder}` : 'lock-lost' };
  });
  const takers = [...new Set(lost.map((n) => holders.get(n.name)).filter((h) => h !== undefined))];
  return {
    actions: [{ type: 'recordNodes', records }],
    message:
      `${whereHeading(step)}: ${lost.length} node(s) not ours` +
      (takers.length > 0 ? ` (locked by session ${takers.join(', ')})` : ' (lock lost)') +
      ` are left alone: ${shortList(names(lost))}`,
  };
}

/**
 * Nodes the site shows claimed by a run of another control plane (its Slurm reason names a run
 * this store does not know): left alone, never touched. Recorded with the status we last knew and
 * `held-by-another-control-plane`, their locks given back (they are this store's locks, and no run
 * of this store works on the nodes), and said once.
 */
export function decideClaimedElsewhere(
  step: StepWhere,
  nodes: readonly NodeRecord[],
  claims: ReadonlyMap<string, string>,
): { actions: NodeAction[]; message: string } | undefined {
  const claimed = nodes.filter((n) => claims.has(n.name));
  if (claimed.length === 0) return undefined;
  const records: NodeRecord[] = claimed.map((n) => ({
    name: n.name,
    index: n.index,
    status: n.status,
    phase: 'LOCK_LOST',
    reason: HELD_BY_ANOTHER_CONTROL_PLANE,
  }));
  const runs = [...new Set(claimed.map((n) => claims.get(n.name)!))];
  return {
    actions: [{ type: 'recordNodes', records }, ...releaseLocks(claimed)],
    message:
      `${whereHeading(step)}: ${claimed.length} node(s) left alone, ${HELD_BY_ANOTHER_CONTROL_PLANE}: ` +
      `the site shows them claimed by run ${runs.join(', ')}, which this control plane does not know: ${shortList(names(claimed))}`,
  };
}

export const names = (nodes: readonly { name: string }[]): string[] => nodes.map((n) => n.name);

/** `counts` plus the upgraded and failed nodes among `records` (minus those among `already`, counted before). */
export function addCounts(
  counts: Progress['counts'],
  records: readonly Pick<NodeRecord, 'status'>[],
  already: Progress['counts'] = { upgraded: 0, failed: 0 },
): NonNullable<Progress['counts']> {
  const of = (status: NodeRecord['status']) => records.filter((r) => r.status === status).length;
  return {
    upgraded: (counts?.upgraded ?? 0) + of('UPGRADED') - (already?.upgraded ?? 0),
    failed: (counts?.failed ?? 0) + of('FAILED') - (already?.failed ?? 0),
  };
}

/** Drained, by us or by anyone: a node an admin drained is drained already for our purposes. */
export function isDrained(node: WlmNode | undefined): boolean {
  return node?.flags.includes('DRAIN') ?? false;
}

/**
 * A rolling upgrade's drain, by its prefix (core/site/node-claims.ts): the one a cancel or a return
 * to service lifts. Ours, or a dead session's of this store whose lock we took over: a node another
 * control plane's run claims is left alone before any decision sees it. Drained, or set DOWN by Slurm
 * while it was ours (a reboot that outlasted SlurmdTimeout or ResumeTimeout); a reason left on a node
 * in service (RESUME keeps it) is not a drain.
 */
export function isOurDrain(node: WlmNode | undefined): boolean {
  return node !== undefined && (isDrained(node) || node.base === 'DOWN') && isUpgradeDrainReason(node.reason);
}

/**
 * Whether the session drains the node: it is not drained, or drained by another rolling upgrade of
 * this store whose lock the session took over (a dead session's): drained again, with this session's
 * claim, so the site names the session at work on it. An admin's drain (a task run's included) is kept.
 */
export function needsOurDrain(node: WlmNode | undefined, upgradeId: string): boolean {
  if (!isDrained(node)) return true;
  const claimant = claimantOf(node?.reason);
  return isUpgradeDrainReason(node?.reason) && claimant !== undefined && claimant !== upgradeId;
}

/**
 * Nodes judged back in service: our drain lifted (RESUME, which also brings a node Slurm kept DOWN
 * after its reboot back up), and a drain that is not ours kept, with its reason as it was set:
 * Slurm appended ` : reboot issued` or ` : Not responding` to it while the node rebooted.
 */
export function returnToService(nodes: readonly string[], wlm: ReadonlyMap<string, WlmNode>): NodeAction[] {
  const resume: string[] = [];
  const restore = new Map<string, string[]>();
  for (const name of nodes) {
    const node = wlm.get(name);
    if (node === undefined) continue;
    if (isOurDrain(node)) {
      resume.push(name);
      continue;
    }
    if (!isDrained(node) || node.reason === undefined) continue;
    const asSet = reasonAsSet(node.reason);
    // Any reason the admin set that the connectors can carry back (names.ts siteReasonProblem); the rest is said in unrestoredReasons' message.
    if (asSet !== node.reason && siteReasonProblem(asSet) === undefined) restore.set(asSet, [...(restore.get(asSet) ?? []), name]);
  }
  return [
    ...(resume.length > 0 ? [{ type: 'resume' as const, nodes: resume }] : []),
    ...[...restore].map(([reason, named]) => ({ type: 'drain' as const, nodes: named, reason })),
  ];
}

/**
 * The message part for nodes returned to service whose admin's drain reason cannot be given back as
 * it was set (returnToService leaves Slurm's suffix on them): which nodes, and why. Undefined when
 * every admin's reason was given back.
 */
export function unrestoredReasons(nodes: readonly string[], wlm: ReadonlyMap<string, WlmNode>): string | undefined {
  const left: string[] = [];
  for (const name of nodes) {
    const node = wlm.get(name);
    if (node === undefined || isOurDrain(node) || !isDrained(node) || node.reason === undefined) continue;
    const asSet = reasonAsSet(node.reason);
    const problem = asSet === node.reason ? undefined : siteReasonProblem(asSet);
    if (problem !== undefined) left.push(`${name} (its reason ${problem})`);
  }
  return left.length === 0
    ? undefined
    : `${left.length} admin drain reason(s) left as Slurm shows them, with its suffix, as they cannot be sent back whole: ${shortList(left)}`;
}

/**
 * Of nodes the run returned (resumed), those back in service (not drained, failed or DOWN) whose
 * reason is still this run's claim: Slurm 24.11 without accounting keeps the reason through RESUME
 * (src/interfaces/accounting_storage.c clusteracct_storage_g_node_up returns before clearing it when
 * no accounting plugin runs; 22.05 and 26.05 clear it first). Their reason is blanked; an admin's
 * reason, or another run's, is never touched.
 */
export function claimsLeftInService(upgradeId: string, nodes: readonly string[], wlm: ReadonlyMap<string, WlmNode>): string[] {
  return nodes.filter((name) => {
    const node = wlm.get(name);
    return node !== undefined && !isDrained(node) && !node.flags.includes('FAIL') && node.base !== 'DOWN' && isClaimOf(node.reason, upgradeId);
  });
}

/** Records of `nodes` in a new status (and phase). */
export function recordNodes(nodes: readonly NodeRecord[], record: Omit<NodeRecord, 'name' | 'index'>): NodeAction[] {
  // The lock token stays with the record while the lock is held: the node's later actions are checked against it.
  const keep = (n: NodeRecord) => (n.lockToken !== undefined && record.status === 'IN_PROGRESS' ? { lockToken: n.lockToken } : {});
  // The phases it went through stay with it (the new one is stamped when written); a node put back starts afresh.
  const times = (n: NodeRecord) => (n.phaseTimes !== undefined && record.status !== 'NOT_STARTED' ? { phaseTimes: n.phaseTimes } : {});
  return nodes.length === 0 ? [] : [{ type: 'recordNodes', records: nodes.map((n) => ({ name: n.name, index: n.index, ...keep(n), ...times(n), ...record })) }];
}

export function releaseLocks(nodes: readonly { name: string }[]): NodeAction[] {
  return nodes.length === 0 ? [] : [{ type: 'releaseLocks', nodes: names(nodes) }];
}

/**
 * Fails nodes as CRUS does (`scontrol update State=FAIL Reason=<reason>` and into the failed group),
 * records them FAILED and releases their locks. A node already failed with that reason is not
 * failed again; a node the workload manager does not know is only recorded.
 */
export function failNodes(session: UpgradeSession, nodes: readonly NodeRecord[], reason: string, wlm: ReadonlyMap<string, WlmNode>): NodeAction[] {
  if (nodes.length === 0) return [];
  return [...failInSite(session, nodes, reason, wlm), ...recordNodes(nodes, { status: 'FAILED', phase: 'DONE', reason }), ...releaseLocks(nodes)];
}

/** The site half of failing nodes: `State=FAIL Reason=<reason>` (once) and into the failed group. */
export function failInSite(session: UpgradeSession, nodes: readonly { name: string }[], reason: string, wlm: ReadonlyMap<string, WlmNode>): NodeAction[] {
  if (nodes.length === 0) return [];
  const toFail = names(nodes).filter((name) => {
    const node = wlm.get(name);
    return node !== undefined && !(node.flags.includes('FAIL') && isFailureReason(node.reason, reason));
  });
  return [
    ...(toFail.length > 0 ? [{ type: 'fail' as const, nodes: toFail, reason, siteReason: failureMark(reason, session.upgradeId) }] : []),
    { type: 'addToGroup', label: session.failedLabel, nodes: names(nodes) },
  ];
}

/** A record entering its phase now: the phase's time stamped, unless it was in that phase already (a retried write keeps the first time). */
export function stampPhase(record: NodeRecord, now: number): NodeRecord {
  if (record.phase === undefined || record.phaseTimes?.[record.phase] !== undefined) return record;
  return { ...record, phaseTimes: { ...record.phaseTimes, [record.phase]: now } };
}

/** Seconds until a stage timeout of `timeoutSeconds` counted from `since` runs out (at least 1): a site wait's recheck. */
export function secondsUntilTimeout(since: number, timeoutSeconds: number, now: number): number {
  return Math.max(1, Math.ceil((since + timeoutSeconds * 1000 - now) / 1000));
}
