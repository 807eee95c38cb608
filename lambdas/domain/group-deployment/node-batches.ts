/** Splits the nodes a phase submits into the batches its group's concurrency allows, in order. */
import type { NodeConcurrency } from './strategy';

export function nodeBatches(nodes: readonly string[], concurrency: NodeConcurrency): string[][] {
  if (nodes.length === 0) return [];
  const size = concurrency.type === 'one_by_one' ? 1 : (concurrency.amount ?? nodes.length);
  const batches: string[][] = [];
  for (let start = 0; start < nodes.length; start += size) batches.push(nodes.slice(start, start + size));
  return batches;
}
