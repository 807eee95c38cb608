/** Step k covers plan positions [k*size, (k+1)*size), as CRUS slices the starting group. */
export function stepCount(nodeCount: number, stepSize: number): number {
  return Math.ceil(nodeCount / stepSize);
}

export function stepRange(step: number, stepSize: number, nodeCount: number): { start: number; end: number } {
  const start = step * stepSize;
  return { start, end: Math.min(start + stepSize, nodeCount) };
}

/**
 * A step as people count it, in messages, events, the plan, progress, listings and the API's JSON:
 * from 1, the last one once past it (cleanup). Stored progress keeps `step` 0-based, as stored
 * sessions and their workflows' executions have it: only what is shown is counted from 1.
 */
export function stepNumber(step: number, stepCount: number): number {
  return Math.min(step, Math.max(stepCount - 1, 0)) + 1;
}

/** `step 1 of 8` (see stepNumber); `step 1` before the plan is taken (no step count yet). */
export function stepText(step: number, stepCount: number): string {
  return stepCount > 0 ? `step ${stepNumber(step, stepCount)} of ${stepCount}` : `step ${step + 1}`;
}

/** `stepText` at the start of a message: `Step 1 of 8`. */
export function stepHeading(step: number, stepCount: number): string {
  return `S${stepText(step, stepCount).slice(1)}`;
}

export function stepOf(index: number, stepSize: number): number {
  return Math.floor(index / stepSize);
}
