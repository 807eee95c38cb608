import type { Progress, UpgradeSession } from './session';

/**
 * When the session should end at the pace so far: the time per node done since it was created,
 * times the nodes left. Written when the counts change (a step ends, a window node leaves flight),
 * so a display reads it off the session item; none before the first node is done or after the last.
 */
export function estimateEnd(session: Pick<UpgradeSession, 'createdAt' | 'nodeCount'>, counts: Progress['counts'], now: number): Progress['estimate'] {
  const done = (counts?.upgraded ?? 0) + (counts?.failed ?? 0);
  const started = Date.parse(session.createdAt);
  if (done === 0 || done >= session.nodeCount || !(now > started)) return undefined;
  const perNode = (now - started) / done;
  return {
    endsAt: Math.round(now + perNode * (session.nodeCount - done)),
    basis: `${done} of ${session.nodeCount} node(s) done in ${Math.round((now - started) / 1000)} s`,
  };
}
