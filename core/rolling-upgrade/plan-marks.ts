/**
 * Where each node of a window's plan stands, two bits per plan position, kept on the session item
 * (2,500 bytes for 10,000 nodes): what lets an increment find the nodes still to do, and count the
 * done ones, without reading every node record. In flight is not a mark: the window's in-flight
 * index says it.
 */
export const Mark = { todo: 0, upgraded: 1, failed: 2, gone: 3 } as const;
export type Mark = (typeof Mark)[keyof typeof Mark];

/** Marks of a plan of `count` nodes, every one TODO. */
export function emptyMarks(count: number): string {
  return Buffer.alloc(Math.ceil(count / 4)).toString('base64');
}

export function markAt(marks: Buffer, position: number): Mark {
  return ((marks[position >> 2]! >> ((position & 3) * 2)) & 3) as Mark;
}

/** The marks with these positions changed. */
export function withMarks(marks: string, changes: ReadonlyMap<number, Mark>): string {
  if (changes.size === 0) return marks;
  const bytes = Buffer.from(marks, 'base64');
  for (const [position, mark] of changes) {
    const shift = (position & 3) * 2;
    bytes[position >> 2] = (bytes[position >> 2]! & ~(3 << shift)) | (mark << shift);
  }
  return bytes.toString('base64');
}

/** Plan positions still TODO and not in flight, ascending, from `from` (at most `limit` of them). */
export function todoPositions(marks: string, count: number, inFlight: ReadonlySet<number>, from = 0, limit = Infinity): number[] {
  const bytes = Buffer.from(marks, 'base64');
  const positions: number[] = [];
  for (let position = from; position < count && positions.length < limit; position++) {
    if (markAt(bytes, position) === Mark.todo && !inFlight.has(position)) positions.push(position);
  }
  return positions;
}

/** Upgraded and failed marks at plan positions [from, to). */
export function markCounts(marks: string, from: number, to: number): { upgraded: number; failed: number } {
  const bytes = Buffer.from(marks, 'base64');
  const counts = { upgraded: 0, failed: 0 };
  for (let position = from; position < to; position++) {
    const mark = markAt(bytes, position);
    if (mark === Mark.upgraded) counts.upgraded++;
    else if (mark === Mark.failed) counts.failed++;
  }
  return counts;
}

/** A set of plan positions, one bit each (base64; 1,250 bytes for 10,000 nodes), with these positions added. */
export function withPositions(bits: string | undefined, count: number, positions: Iterable<number>): string {
  const bytes = Buffer.from(bits ?? Buffer.alloc(Math.ceil(count / 8)).toString('base64'), 'base64');
  for (const position of positions) bytes[position >> 3] = bytes[position >> 3]! | (1 << (position & 7));
  return bytes.toString('base64');
}

export function hasPosition(bits: string | undefined, position: number): boolean {
  if (bits === undefined) return false;
  return ((Buffer.from(bits, 'base64')[position >> 3] ?? 0) & (1 << (position & 7))) !== 0;
}
