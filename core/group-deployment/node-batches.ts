/**
 * How a phase submits its nodes under the group's concurrency: batches (one site action each) and
 * how many may run at once. `parallel` with an amount is a sliding window (a node starts as soon as
 * one finishes), not lockstep batches. Step Functions runs at most 40 inline Map iterations at once,
 * so a larger amount packs several nodes per batch without ever exceeding the amount in flight.
 */
import type { NodeConcurrency } from './strategy';

/** Step Functions' limit on concurrent iterations of an inline Map. */
export const MAX_CONCURRENT_BATCHES = 40;

export interface PhaseWork {
  batches: string[][];
  /** Batches that may run at once (at least 1). */
  maxConcurrency: number;
}

export function phaseWork(nodes: readonly string[], concurrency: NodeConcurrency): PhaseWork {
  if (nodes.length === 0) return { batches: [], maxConcurrency: 1 };
  if (concurrency.type === 'parallel' && concurrency.amount === undefined) return { batches: [[...nodes]], maxConcurrency: 1 };
  const amount = concurrency.type === 'one_by_one' ? 1 : concurrency.amount!;
  const size = Math.ceil(amount / MAX_CONCURRENT_BATCHES);
  const batches: string[][] = [];
  for (let start = 0; start < nodes.length; start += size) batches.push(nodes.slice(start, start + size));
  return { batches, maxConcurrency: Math.max(1, Math.floor(amount / size)) };
}
