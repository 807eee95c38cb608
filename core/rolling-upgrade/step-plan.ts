/** Step k covers plan positions [k*size, (k+1)*size), as CRUS slices the starting group. */
export function stepCount(nodeCount: number, stepSize: number): number {
  return Math.ceil(nodeCount / stepSize);
}

export function stepRange(step: number, stepSize: number, nodeCount: number): { start: number; end: number } {
  const start = step * stepSize;
  return { start, end: Math.min(start + stepSize, nodeCount) };
}

export function stepOf(index: number, stepSize: number): number {
  return Math.floor(index / stepSize);
}
