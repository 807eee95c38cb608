import { gunzipSync, gzipSync } from 'node:zlib';

/** A value as gzipped JSON: a 10,000-node state or plan packs to tens of KB. */
export const pack = (value: unknown): Uint8Array => gzipSync(JSON.stringify(value));
export const unpack = <T>(bytes: Uint8Array): T => JSON.parse(gunzipSync(bytes).toString('utf8')) as T;

/** Gzipped parts stay well under DynamoDB's 400 KB item limit. */
export const PACKED_PART_BYTES = 300 * 1024;

/** A large value (a plan) packed and cut into parts of at most PACKED_PART_BYTES, each stored as one item. */
export function packParts(value: unknown): Buffer[] {
  const packed = Buffer.from(pack(value));
  const parts = Math.max(1, Math.ceil(packed.length / PACKED_PART_BYTES));
  return Array.from({ length: parts }, (_, part) => packed.subarray(part * PACKED_PART_BYTES, (part + 1) * PACKED_PART_BYTES));
}

/** The value packParts cut, from its parts' `data` in order. */
export function unpackParts<T>(items: readonly Record<string, unknown>[]): T {
  return unpack<T>(Buffer.concat(items.map((item) => Buffer.from(item.data as Uint8Array))));
}
