/**
 * Slurm hostlist expressions: `nid[001-128,130]`, `x3000c0s[1-3]b0n[0-1]`, `a1,b[2-3]`.
 * Node lists travel to commands in this form (one short argument instead of thousands of names),
 * and `scontrol show hostnames` is what Slurm itself calls the expansion.
 *
 * Rules, as Slurm's hostlist.c applies them:
 * - top-level commas separate expressions; commas inside brackets separate ranges;
 * - a range `lo-hi` keeps the width of `lo` (`[001-003]` gives 001, 002, 003; `[8-10]` gives 8, 9, 10);
 * - several bracket groups give every combination, the rightmost group varying fastest.
 */

import { InvalidInputError } from '../errors';

/** No expression may expand to more names than this: a typo like `n[0-99999999]` must not exhaust memory. */
export const MAX_HOSTLIST_NAMES = 1_000_000;

export class HostlistError extends InvalidInputError {
  constructor(
    readonly expression: string,
    detail: string,
  ) {
    super('hostlist', [{ field: 'hostlist', message: `${JSON.stringify(expression)}: ${detail}` }]);
  }
}

interface Range {
  lo: number;
  hi: number;
  width: number;
}

/** Every name of a hostlist expression, in order, duplicates kept as written. */
export function expandHostlist(expression: string): string[] {
  const out: string[] = [];
  for (const part of splitTopLevel(expression)) {
    if (part === '') throw new HostlistError(expression, 'empty name between commas');
    const pieces = parsePart(part, expression);
    let names = [''];
    for (const piece of pieces) {
      if (typeof piece === 'string') {
        names = names.map((n) => n + piece);
        continue;
      }
      const count = names.length * piece.reduce((sum, r) => sum + r.hi - r.lo + 1, 0);
      if (count + out.length > MAX_HOSTLIST_NAMES) throw new HostlistError(expression, `expands to more than ${MAX_HOSTLIST_NAMES} names`);
      const next: string[] = [];
      for (const prefix of names) {
        for (const { lo, hi, width } of piece) for (let n = lo; n <= hi; n++) next.push(prefix + String(n).padStart(width, '0'));
      }
      names = next;
    }
    for (const n of names) out.push(n);
  }
  return out;
}

function splitTopLevel(expression: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < expression.length; i++) {
    const c = expression[i];
    if (c === '[') {
      if (depth > 0) throw new HostlistError(expression, 'nested brackets');
      depth++;
    } else if (c === ']') {
      if (depth === 0) throw new HostlistError(expression, 'unmatched ]');
      depth--;
    } else if (c === ',' && depth === 0) {
      parts.push(expression.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0) throw new HostlistError(expression, 'unmatched [');
  parts.push(expression.slice(start));
  return parts;
}

function parsePart(part: string, expression: string): (string | Range[])[] {
  const pieces: (string | Range[])[] = [];
  const re = /\[([^\]]*)\]/g;
  let last = 0;
  for (let m = re.exec(part); m !== null; m = re.exec(part)) {
    if (m.index > last) pieces.push(part.slice(last, m.index));
    pieces.push(parseRanges(m[1]!, expression));
    last = m.index + m[0].length;
  }
  if (last < part.length) pieces.push(part.slice(last));
  return pieces;
}

function parseRanges(inner: string, expression: string): Range[] {
  if (inner === '') throw new HostlistError(expression, 'empty brackets');
  return inner.split(',').map((range) => {
    const m = /^(\d+)(?:-(\d+))?$/.exec(range);
    if (!m) throw new HostlistError(expression, `bad range '${range}' (expected N or N-M)`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo) throw new HostlistError(expression, `range '${range}' runs backwards`);
    if (!Number.isSafeInteger(hi)) throw new HostlistError(expression, `range '${range}' is too large`);
    return { lo, hi, width: m[1]!.length };
  });
}

/** A digit run outside brackets: where a name can be folded into a bracket group. */
interface Field {
  prefix: string;
  digits: string;
  suffix: string;
}

/**
 * A short hostlist expression whose expansion is exactly `names` (as a set; order within a
 * bracket group is numeric). Folds the last numeric field first, then earlier ones, so
 * `x3000c0s1b0n0 ... x3000c0s3b0n1` becomes `x3000c0s[1-3]b0n[0-1]`.
 */
export function compressHostlist(names: readonly string[]): string {
  let items = [...new Set(names)];
  for (;;) {
    const folded = foldOnce(items);
    if (folded === undefined) return items.join(',');
    items = folded;
  }
}

/** Folds on the last field that merges anything (fields counted from the end); undefined when none does. */
function foldOnce(items: readonly string[]): string[] | undefined {
  const fieldsOf = items.map(fieldsOutsideBrackets);
  const maxFields = Math.max(0, ...fieldsOf.map((f) => f.length));
  for (let fromEnd = 0; fromEnd < maxFields; fromEnd++) {
    const groups = new Map<string, { field: Field; width?: number }[]>();
    const order: (string | { key: string })[] = [];
    fieldsOf.forEach((fields, i) => {
      const field = fields[fields.length - 1 - fromEnd];
      if (!field) {
        order.push(items[i]!);
        return;
      }
      const key = `${field.prefix}\u0000${field.suffix}`;
      let group = groups.get(key);
      if (!group) {
        group = [];
        groups.set(key, group);
        order.push({ key });
      }
      group.push({ field });
    });
    if (![...groups.values()].some((g) => g.length > 1)) continue;
    return order.map((entry) => (typeof entry === 'string' ? entry : foldGroup(groups.get(entry.key)!.map((g) => g.field))));
  }
  return undefined;
}

function fieldsOutsideBrackets(name: string): Field[] {
  const fields: Field[] = [];
  let depth = 0;
  for (let i = 0; i < name.length; ) {
    const c = name[i]!;
    if (c === '[') depth++;
    else if (c === ']') depth--;
    if (depth === 0 && c >= '0' && c <= '9') {
      let j = i;
      while (j < name.length && name[j]! >= '0' && name[j]! <= '9') j++;
      fields.push({ prefix: name.slice(0, i), digits: name.slice(i, j), suffix: name.slice(j) });
      i = j;
      continue;
    }
    i++;
  }
  return fields;
}

/** One `prefix[ranges]suffix` for names that differ only in one digit run. */
function foldGroup(fields: readonly Field[]): string {
  const { prefix, suffix } = fields[0]!;
  if (fields.length === 1) return prefix + fields[0]!.digits + suffix;
  // Padded numbers ("007") keep their width; a plain number as wide as a padded one reads the same in it.
  const paddedWidths = new Set(fields.filter((f) => isPadded(f.digits)).map((f) => f.digits.length));
  // Width 0: plain numbers, written as they are.
  const byWidth = new Map<number, number[]>();
  for (const { digits } of fields) {
    const width = isPadded(digits) || paddedWidths.has(digits.length) ? digits.length : 0;
    const list = byWidth.get(width) ?? [];
    list.push(Number(digits));
    byWidth.set(width, list);
  }
  const ranges: string[] = [];
  for (const [width, numbers] of [...byWidth.entries()].sort((a, b) => a[0] - b[0])) {
    const sorted = [...new Set(numbers)].sort((a, b) => a - b);
    const text = (n: number) => String(n).padStart(width, '0');
    for (let i = 0; i < sorted.length; ) {
      let j = i;
      while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
      ranges.push(i === j ? text(sorted[i]!) : `${text(sorted[i]!)}-${text(sorted[j]!)}`);
      i = j + 1;
    }
  }
  return `${prefix}[${ranges.join(',')}]${suffix}`;
}

function isPadded(digits: string): boolean {
  return digits.length > 1 && digits.startsWith('0');
}

/** Hostlist expressions of at most `maxNames` names each, in the given order: keeps each command's output small. */
export function chunkHostlist(names: readonly string[], maxNames: number): string[] {
  const chunks: string[] = [];
  for (let i = 0; i < names.length; i += maxNames) chunks.push(compressHostlist(names.slice(i, i + maxNames)));
  return chunks;
}
