import { compareScalars, itemSize, typeOf, type AttributeValue, type Item } from './attribute-values';
import { ValidationError } from './errors';

export type KeyType = 'S' | 'N' | 'B';

/** A key schema: the partition (hash) attribute, and the sort (range) attribute if any. */
export interface KeySchema {
  hash: string;
  hashType: KeyType;
  range?: string;
  rangeType?: KeyType;
}

export interface IndexDefinition {
  name: string;
  kind: 'GLOBAL' | 'LOCAL';
  schema: KeySchema;
  projection: { type: 'ALL' | 'KEYS_ONLY' | 'INCLUDE'; nonKeyAttributes?: string[] };
}

/** What CreateTable was given, as the table keeps it (and the disk keeps it). */
export interface TableDefinition {
  name: string;
  schema: KeySchema;
  indexes: IndexDefinition[];
  attributeDefinitions: { AttributeName: string; AttributeType: KeyType }[];
  billingMode: 'PAY_PER_REQUEST' | 'PROVISIONED';
  provisionedThroughput?: { ReadCapacityUnits: number; WriteCapacityUnits: number };
  /** Epoch seconds. */
  createdAt: number;
}

/** An item's place in a sorted run: its sort value, and the item. */
interface Entry {
  /** The sort-key value (undefined on a table without one). */
  sort: string | undefined;
  item: Item;
  /** Its size in bytes (itemSize), for the table's size. */
  size: number;
}

/** An index entry: sorted by the index's sort key, then by the table's keys (a total order for paging). */
interface IndexEntry {
  sort: string | undefined;
  tableHash: string;
  tableSort: string | undefined;
  item: Item;
}

/** Where a page left off: the sort value, and the table's keys (which order entries of an index with equal sort values). */
export interface Position {
  sort: string | undefined;
  tableHash: string;
  tableSort: string | undefined;
}

/** A sort-key range: bounds (inclusive or not) and a string prefix (begins_with). */
export interface SortBounds {
  low?: { value: string; inclusive: boolean };
  high?: { value: string; inclusive: boolean };
  prefix?: string;
}

/** The first index at which `before` turns false (it holds on a prefix of the run, then never again). */
function firstFalse<T>(run: readonly T[], before: (entry: T) => boolean): number {
  let low = 0;
  let high = run.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (before(run[mid]!)) low = mid + 1;
    else high = mid;
  }
  return low;
}

export const MAX_ITEM_BYTES = 400 * 1024;
const MAX_HASH_KEY_BYTES = 2048;
const MAX_RANGE_KEY_BYTES = 1024;

/** The key value of an attribute as a string (numbers canonical, binaries base64): what partitions are keyed by. */
function scalar(value: AttributeValue): string {
  return (value as { S?: string; N?: string; B?: string }).S ?? (value as { N?: string }).N ?? (value as { B: string }).B;
}

/**
 * One table, in memory: partitions by hash key, each a run of items sorted by sort key; every
 * secondary index kept the same way beside it. Items are stored as given (already normalised) and
 * never changed in place: an update stores a new item, so an item handed to a reader stays as it was.
 */
export class Table {
  private readonly partitions = new Map<string, Entry[]>();
  private readonly indexData = new Map<string, Map<string, IndexEntry[]>>();
  private count = 0;
  private bytes = 0;

  constructor(readonly definition: TableDefinition) {
    for (const index of definition.indexes) this.indexData.set(index.name, new Map());
  }

  get itemCount(): number {
    return this.count;
  }

  get sizeBytes(): number {
    return this.bytes;
  }

  index(name: string): IndexDefinition | undefined {
    return this.definition.indexes.find((i) => i.name === name);
  }

  /** Checks a Key (exactly the table's key attributes, of their types) and returns its hash and sort strings. */
  keyOf(key: Item, schema: KeySchema = this.definition.schema): { hash: string; sort: string | undefined } {
    const names = Object.keys(key);
    const expected = schema.range ? 2 : 1;
    const hash = key[schema.hash];
    const sort = schema.range ? key[schema.range] : undefined;
    if (names.length !== expected || !hash || (schema.range && !sort) || typeOf(hash) !== schema.hashType || (sort && typeOf(sort) !== schema.rangeType)) {
      throw new ValidationError('The provided key element does not match the schema');
    }
    return { hash: checkKeyValue(schema.hash, hash, MAX_HASH_KEY_BYTES), sort: sort && checkKeyValue(schema.range!, sort, MAX_RANGE_KEY_BYTES) };
  }

  /** Checks an item for a put: its key attributes present and typed, index keys typed, size under 400 KB. */
  checkItem(item: Item, knownSize?: number): { hash: string; sort: string | undefined; size: number } {
    const { hash: hashName, hashType, range, rangeType } = this.definition.schema;
    for (const [name, type] of [[hashName, hashType], ...(range ? [[range, rangeType!]] : [])] as [string, KeyType][]) {
      const value = item[name];
      if (!value) throw new ValidationError(`One or more parameter values were invalid: Missing the key ${name} in the item`);
      if (typeOf(value) !== type)
        throw new ValidationError(`One or more parameter values were invalid: Type mismatch for key ${name} expected: ${type} actual: ${typeOf(value)}`);
    }
    for (const index of this.definition.indexes) {
      for (const [name, type] of [
        [index.schema.hash, index.schema.hashType],
        ...(index.schema.range ? [[index.schema.range, index.schema.rangeType!]] : []),
      ] as [string, KeyType][]) {
        const value = item[name];
        if (!value) continue;
        if (typeOf(value) !== type) {
          throw new ValidationError(
            `One or more parameter values were invalid: Type mismatch for Index Key ${name} Expected: ${type} Actual: ${typeOf(value)} IndexName: ${index.name}`,
          );
        }
        if (scalar(value) === '') {
          throw new ValidationError(
            `One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty string value. IndexName: ${index.name}, IndexKey: ${name}`,
          );
        }
      }
    }
    const size = knownSize ?? itemSize(item);
    if (size > MAX_ITEM_BYTES) throw new ValidationError('Item size has exceeded the maximum allowed size');
    return {
      hash: checkKeyValue(hashName, item[hashName]!, MAX_HASH_KEY_BYTES),
      sort: range ? checkKeyValue(range, item[range]!, MAX_RANGE_KEY_BYTES) : undefined,
      size,
    };
  }

  /** The key attributes of an item (what a LastEvaluatedKey or a BatchGet response key holds). */
  keyAttributes(item: Item, schema: KeySchema = this.definition.schema): Item {
    const key: Item = { [schema.hash]: item[schema.hash]! };
    if (schema.range) key[schema.range] = item[schema.range]!;
    return key;
  }

  get(hash: string, sort: string | undefined): Item | undefined {
    const run = this.partitions.get(hash);
    if (!run) return undefined;
    const at = this.find(run, sort);
    return at.found ? run[at.index]!.item : undefined;
  }

  /** Stores `item` (of `size` bytes, as checkItem found) under its key (replacing any), keeping the indexes in step; returns the item it replaced. */
  put(hash: string, sort: string | undefined, item: Item, size: number): Item | undefined {
    let run = this.partitions.get(hash);
    if (!run) {
      run = [];
      this.partitions.set(hash, run);
    }
    const at = this.find(run, sort);
    let old: Item | undefined;
    if (at.found) {
      const replaced = run[at.index]!;
      old = replaced.item;
      this.bytes -= replaced.size;
      run[at.index] = { sort, item, size };
    } else {
      run.splice(at.index, 0, { sort, item, size });
      this.count++;
    }
    this.bytes += size;
    this.reindex(hash, sort, old, item);
    return old;
  }

  delete(hash: string, sort: string | undefined): Item | undefined {
    const run = this.partitions.get(hash);
    if (!run) return undefined;
    const at = this.find(run, sort);
    if (!at.found) return undefined;
    const { item: old, size } = run[at.index]!;
    run.splice(at.index, 1);
    if (run.length === 0) this.partitions.delete(hash);
    this.count--;
    this.bytes -= size;
    this.reindex(hash, sort, old, undefined);
    return old;
  }

  /**
   * The items of one partition of the table or of an index whose sort key lies within `bounds`, in
   * sort order (or reversed), from just after `after` (an ExclusiveStartKey's position). Bounds are
   * found by binary search: a Query reads only its key range, as DynamoDB does.
   */
  *partition(indexName: string | undefined, hash: string, forward: boolean, after?: Position, bounds: SortBounds = {}): Generator<Item> {
    const schema = indexName === undefined ? this.definition.schema : this.index(indexName)!.schema;
    const run: readonly (Entry | IndexEntry)[] = (indexName === undefined ? this.partitions.get(hash) : this.indexData.get(indexName)!.get(hash)) ?? [];
    const type = schema.rangeType;
    // [from, to): the entries within the bounds.
    let from = 0;
    let to = run.length;
    if (type) {
      const below = (value: string, inclusive: boolean) => (e: Entry | IndexEntry) => {
        const order = compareScalars(type, e.sort!, value);
        return inclusive ? order < 0 : order <= 0;
      };
      if (bounds.low) from = firstFalse(run, below(bounds.low.value, bounds.low.inclusive));
      if (bounds.high) to = firstFalse(run, below(bounds.high.value, !bounds.high.inclusive));
      if (bounds.prefix !== undefined) {
        const prefix = bounds.prefix;
        from = Math.max(from, firstFalse(run, below(prefix, true)));
        to = Math.min(
          to,
          firstFalse(run, (e) => compareScalars(type, e.sort!, prefix) < 0 || e.sort!.startsWith(prefix)),
        );
      }
    }
    if (after) {
      const at = indexName === undefined ? this.find(run as Entry[], after.sort) : this.findIndexEntry(run as IndexEntry[], { ...after, item: {} }, schema);
      if (forward) from = Math.max(from, at.found ? at.index + 1 : at.index);
      else to = Math.min(to, at.index);
    }
    if (forward) for (let i = from; i < to; i++) yield run[i]!.item;
    else for (let i = to - 1; i >= from; i--) yield run[i]!.item;
  }

  /** Every partition's hash key of the table or an index, in a stable order (for Scan and its paging). */
  hashes(indexName?: string): string[] {
    const keys = [...(indexName === undefined ? this.partitions.keys() : this.indexData.get(indexName)!.keys())];
    const type = indexName === undefined ? this.definition.schema.hashType : this.index(indexName)!.schema.hashType;
    return keys.sort((a, b) => compareScalars(type, a, b));
  }

  private find(run: Entry[], sort: string | undefined): { found: boolean; index: number } {
    const type = this.definition.schema.rangeType;
    if (!type) return run.length > 0 ? { found: true, index: 0 } : { found: false, index: 0 };
    let low = 0;
    let high = run.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const order = compareScalars(type, run[mid]!.sort!, sort!);
      if (order === 0) return { found: true, index: mid };
      if (order < 0) low = mid + 1;
      else high = mid;
    }
    return { found: false, index: low };
  }

  private compareIndexEntries(a: IndexEntry, b: IndexEntry, schema: KeySchema): number {
    if (schema.rangeType) {
      const order = compareScalars(schema.rangeType, a.sort!, b.sort!);
      if (order !== 0) return order;
    }
    const { hashType, rangeType } = this.definition.schema;
    const order = compareScalars(hashType, a.tableHash, b.tableHash);
    if (order !== 0 || !rangeType) return order;
    return compareScalars(rangeType, a.tableSort!, b.tableSort!);
  }

  private findIndexEntry(run: IndexEntry[], entry: IndexEntry, schema: KeySchema): { found: boolean; index: number } {
    let low = 0;
    let high = run.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const order = this.compareIndexEntries(run[mid]!, entry, schema);
      if (order === 0) return { found: true, index: mid };
      if (order < 0) low = mid + 1;
      else high = mid;
    }
    return { found: false, index: low };
  }

  /** Moves an item's entries in each secondary index (an item without an index's key attributes is not in it: a sparse index). */
  private reindex(tableHash: string, tableSort: string | undefined, old: Item | undefined, item: Item | undefined): void {
    for (const index of this.definition.indexes) {
      const data = this.indexData.get(index.name)!;
      const entryOf = (it: Item | undefined): IndexEntry | undefined => {
        if (!it) return undefined;
        const hash = it[index.schema.hash];
        const sort = index.schema.range ? it[index.schema.range] : undefined;
        if (!hash || (index.schema.range && !sort)) return undefined;
        return { sort: sort && scalar(sort), tableHash, tableSort, item: it };
      };
      const before = entryOf(old);
      const after = entryOf(item);
      if (before) {
        const hash = scalar(old![index.schema.hash]!);
        const run = data.get(hash)!;
        const at = this.findIndexEntry(run, before, index.schema);
        if (at.found) run.splice(at.index, 1);
        if (run.length === 0) data.delete(hash);
      }
      if (after) {
        const hash = scalar(item![index.schema.hash]!);
        let run = data.get(hash);
        if (!run) {
          run = [];
          data.set(hash, run);
        }
        const at = this.findIndexEntry(run, after, index.schema);
        run.splice(at.index, 0, after);
      }
    }
  }

  /** The hash and sort strings of an index entry's position (from an ExclusiveStartKey on an index). */
  indexPosition(indexName: string, key: Item): Position & { hash: string } {
    const schema = this.index(indexName)!.schema;
    const hash = key[schema.hash];
    const sort = schema.range ? key[schema.range] : undefined;
    const table = this.definition.schema;
    const tableHash = key[table.hash];
    const tableSort = table.range ? key[table.range] : undefined;
    if (!hash || (schema.range && !sort) || !tableHash || (table.range && !tableSort))
      throw new ValidationError('The provided starting key is invalid: The provided key element does not match the schema');
    return { hash: scalar(hash), sort: sort && scalar(sort), tableHash: scalar(tableHash), tableSort: tableSort && scalar(tableSort) };
  }

  /** Every item, partition by partition (for the disk snapshot and Scan). */
  *items(): Generator<Item> {
    for (const run of this.partitions.values()) for (const entry of run) yield entry.item;
  }
}

function checkKeyValue(name: string, value: AttributeValue, maxBytes: number): string {
  const text = scalar(value);
  if (text === '')
    throw new ValidationError(
      `One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: ${name}`,
    );
  const bytes = 'B' in value ? Buffer.byteLength(text, 'base64') : Buffer.byteLength(text);
  if (bytes > maxBytes) {
    throw new ValidationError(
      maxBytes === MAX_HASH_KEY_BYTES
        ? 'One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes'
        : 'One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes',
    );
  }
  return text;
}
