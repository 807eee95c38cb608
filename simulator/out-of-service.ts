/** Most intervals open at one instant, from the site state's `outOfService` intervals (an open one counts to the end). */
export function peakOutOfService(intervals: readonly (readonly [number, number | null])[]): number {
  const events = intervals
    .flatMap(
      ([a, b]) =>
        [
          [a, 1],
          [b ?? Infinity, -1],
        ] as [number, number][],
    )
    .sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let open = 0;
  let most = 0;
  for (const [, delta] of events) most = Math.max(most, (open += delta));
  return most;
}
