import { cancelChunk, decideCancel } from '../../../core/rolling-upgrade/cancel-decisions';
import { activeNodes, addCounts, decideLocksLost, names, type NodeAction } from '../../../core/rolling-upgrade/stage-decision';
import { markCounts } from '../../../core/rolling-upgrade/plan-marks';
import type { NodeRecord, Progress, UpgradeSession } from '../../../core/rolling-upgrade/session';
import { performDecision } from './perform-decision';
import { releaseSlots } from './slot-reservations';
import { lockLeaseSeconds, type RollingUpgradeDependencies } from './dependencies';
import { loadPlanNodes, loadStepNodes, observeWlm, renewLocks } from './observe';
import type { StageIncrement } from './activity-runner';

/**
 * CANCELLING: observe the step's nodes (resume-step) or the next chunk of the plan (fail-remaining)
 * (core: decideCancel). A session acts only on nodes it holds: it locks the chunk first, and the
 * nodes another session holds (one it was waiting for, say) are left alone, with a message.
 */
export const cancelSession: StageIncrement = async ({ session, progress, deps, now }) => {
  await releaseSlots(deps, session);
  const chunk = cancelChunk(session, progress, deps.settings.cancelChunkSize);
  const records =
    progress.cancelMode === 'resume-step' ? await loadStepNodes(deps, session, progress.step) : await loadPlanNodes(deps, session, chunk.from, chunk.to);
  const active = activeNodes(records);
  const { nodes, heldByOthers } = await lockForCancel(deps, session, active);
  const wlm = await observeWlm(deps, session, nodes);
  const decided = decideCancel({ session, progress, nodes, observed: { wlm, chunk }, now });
  const decision = { ...decided, progress: { ...decided.progress, counts: countsAfter(session, progress, records, decided.actions, chunk) } };
  const others = decideLocksLost({ step: progress.step, stepCount: session.stepCount }, active, heldByOthers);
  if (!others) return performDecision(deps, session, decision, nodes);
  const message = [others.message, decision.message].filter((m) => m !== undefined).join('; ');
  return performDecision(deps, session, { ...decision, actions: [...others.actions, ...decision.actions], message }, nodes);
};

/**
 * The counts once this increment's records are written: the chunk's (or step's) upgraded and failed
 * nodes counted from their records as they will stand, absolutely, so a retried increment counts the
 * same; in mode window minus those the window counted already (its plan marks, frozen since ROLLING).
 */
function countsAfter(
  session: UpgradeSession,
  progress: Progress,
  records: readonly NodeRecord[],
  actions: readonly NodeAction[],
  chunk: { from: number; to: number },
): Progress['counts'] {
  const written = new Map(actions.flatMap((a) => (a.type === 'recordNodes' ? a.records : [])).map((r) => [r.name, r]));
  const after = records.map((r) => written.get(r.name) ?? r);
  const marks = progress.window?.marks;
  const already = session.mode === 'window' && marks ? markCounts(marks, chunk.from, chunk.to) : undefined;
  return addCounts(progress.counts, after, already);
}

/**
 * The locks of the nodes to cancel: those the session recorded are renewed with their token, the others taken
 * (as is a recorded one released meanwhile, or taken again by an earlier attempt of this session); returns the ones
 * it holds, with their tokens, and the others' holders. Not taken again when held: taking bumps the fencing token,
 * and an attempt that then failed at the site left the records with the old one, which the next heartbeat read as
 * a lock lost (scenario seed 201039: a stop whose put-back met Slurm's 500s left its nodes drained, "lock lost").
 */
async function lockForCancel(
  deps: RollingUpgradeDependencies,
  session: UpgradeSession,
  nodes: readonly NodeRecord[],
): Promise<{ nodes: NodeRecord[]; heldByOthers: Map<string, string> }> {
  if (nodes.length === 0) return { nodes: [], heldByOthers: new Map() };
  const lost = await renewLocks(deps, session, nodes);
  const heldByOthers = new Map([...lost].flatMap(([node, holder]) => (holder === undefined ? [] : [[node, holder] as const])));
  const toTake = nodes.filter((n) => n.lockToken === undefined || lost.has(n.name)).filter((n) => !heldByOthers.has(n.name));
  if (toTake.length > 0) {
    const taken = await deps.store.locks.tryLockNodes(session.upgradeId, names(toTake), lockLeaseSeconds(deps.settings, session));
    for (const [node, holder] of taken) heldByOthers.set(node, holder);
  }
  const ours = nodes.filter((n) => !heldByOthers.has(n.name));
  const locks = await deps.store.locks.getNodeLocks(ours.map((n) => n.name));
  return {
    nodes: ours.map((n) => ({ ...n, ...(locks.get(n.name)?.owner === session.upgradeId ? { lockToken: locks.get(n.name)!.fencingToken } : {}) })),
    heldByOthers,
  };
}
