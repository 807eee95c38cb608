/**
 * Run state keeps plain records (JSON for the workflow) keyed by names that come from documents and
 * inventories. These helpers read and write own properties only, so a group or node called
 * `__proto__` or `constructor` is data, never the prototype.
 */

export function ownValue<V>(record: Readonly<Record<string, V>>, key: string): V | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** A shallow copy of `record` with `updates` applied. */
export function withEntries<V>(record: Readonly<Record<string, V>>, updates: Iterable<readonly [string, V]>): Record<string, V> {
  const copy = { ...record };
  for (const [key, value] of updates) {
    Object.defineProperty(copy, key, { value, writable: true, enumerable: true, configurable: true });
  }
  return copy;
}
