import { DependencyCycleError } from '../errors';
/**
 * The few graph algorithms that group deployment, task graphs and the scheduler need, over vertices
 * named by strings. Iterative, so a long dependency chain cannot overflow the stack.
 */

export type Neighbours = (vertex: string) => readonly string[];

/** Tarjan's strongly connected components. A component of 2+ vertices, or 1 with a self-edge, is a cycle. */
export function stronglyConnectedComponents(vertices: readonly string[], edgesFrom: Neighbours): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];

  const visit = (vertex: string) => {
    index.set(vertex, index.size);
    low.set(vertex, index.get(vertex) ?? 0);
    stack.push(vertex);
    onStack.add(vertex);
  };
  const lower = (vertex: string, candidate: number) => low.set(vertex, Math.min(low.get(vertex) ?? candidate, candidate));

  for (const root of vertices) {
    if (index.has(root)) continue;
    visit(root);
    const frames = [{ vertex: root, next: 0 }];
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const targets = edgesFrom(frame.vertex);
      if (frame.next < targets.length) {
        const target = targets[frame.next++]!;
        if (!index.has(target)) {
          visit(target);
          frames.push({ vertex: target, next: 0 });
        } else if (onStack.has(target)) {
          lower(frame.vertex, index.get(target) ?? 0);
        }
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) lower(parent.vertex, low.get(frame.vertex) ?? 0);
      if (low.get(frame.vertex) === index.get(frame.vertex)) {
        const component: string[] = [];
        let member: string | undefined;
        do {
          member = stack.pop();
          if (member === undefined) break;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.vertex);
        components.push(component);
      }
    }
  }
  return components;
}

/**
 * Kahn's topological order where, among vertices whose dependencies are all placed, the one listed
 * first in `vertices` goes first: the same document always gives the same order.
 * Throws if a cycle leaves vertices unplaced (callers validate first).
 */
export function stableTopologicalOrder(vertices: readonly string[], dependenciesOf: Neighbours): string[] {
  const position = new Map(vertices.map((vertex, i) => [vertex, i]));
  const waitingOn = vertices.map(() => 0);
  const dependants: number[][] = vertices.map(() => []);
  vertices.forEach((vertex, i) => {
    for (const dependency of new Set(dependenciesOf(vertex))) {
      const from = position.get(dependency);
      if (from === undefined) continue;
      dependants[from]!.push(i);
      waitingOn[i]!++;
    }
  });

  // Ready positions, kept sorted descending so the smallest pops off the end.
  const ready = waitingOn.flatMap((count, i) => (count === 0 ? [i] : [])).reverse();
  const insertReady = (i: number) => {
    let lo = 0;
    let hi = ready.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ready[mid]! > i) lo = mid + 1;
      else hi = mid;
    }
    ready.splice(lo, 0, i);
  };

  const order: string[] = [];
  for (let next = ready.pop(); next !== undefined; next = ready.pop()) {
    order.push(vertices[next]!);
    for (const dependant of dependants[next]!) {
      if (--waitingOn[dependant]! === 0) insertReady(dependant);
    }
  }
  if (order.length !== vertices.length) {
    const unplaced = vertices.filter((vertex) => !order.includes(vertex));
    throw new DependencyCycleError(unplaced);
  }
  return order;
}

/** Every vertex reachable from `start` (not `start` itself), nearest first. */
export function descendantsOf(start: string, successorsOf: Neighbours): string[] {
  const seen = new Set([start]);
  const found: string[] = [];
  for (let i = -1; i < found.length; i++) {
    for (const next of successorsOf(i < 0 ? start : found[i]!)) {
      if (seen.has(next)) continue;
      seen.add(next);
      found.push(next);
    }
  }
  return found;
}
