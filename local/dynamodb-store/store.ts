import { cloneItem, compareScalars, itemSize, normalizeItem, normalizeValue, typeOf, type AttributeValue, type Item } from './attribute-values';
import {
  DynamoDbStoreError,
  ConditionalCheckFailedError,
  ResourceInUseError,
  ResourceNotFoundError,
  TransactionCanceledError,
  UnknownOperationError,
  ValidationError,
  type CancellationReason,
} from './errors';
import {
  applyUpdate,
  bindCondition,
  bindProjection,
  bindUpdate,
  evaluate,
  ExpressionContext,
  parseCondition,
  parseProjection,
  parseUpdate,
  project,
  type BoundCondition,
  type BoundOperand,
  type Path,
} from './expressions';
import { Table, MAX_ITEM_BYTES, type IndexDefinition, type KeySchema, type KeyType, type Position, type SortBounds, type TableDefinition } from './table';

/** A change the disk must keep: an item stored or removed, or a table created or deleted. */
export type Change =
  | { kind: 'item'; table: string; key: string; item: Item | undefined }
  | { kind: 'table'; table: string; definition: TableDefinition | undefined };

/** Where changes go once made in memory (the data directory's LevelDB); the operation answers once they are kept. */
export interface ChangeSink {
  write(changes: Change[]): Promise<void>;
}

type Input = Record<string, unknown>;
type Output = Record<string, unknown>;

const REGION = 'local';
const ACCOUNT = '000000000000';
/** A Query or Scan page stops after this much data read, as DynamoDB's does. */
const PAGE_BYTES = 1024 * 1024;
const BATCH_GET_MAX = 100;
const BATCH_WRITE_MAX = 25;
const TRANSACT_MAX = 100;
const TABLE_NAME = /^[a-zA-Z0-9_.-]{3,255}$/;

/** The disk key of an item: its table's key values, which cannot hold a NUL. */
export const itemDiskKey = (hash: string, sort: string | undefined): string => (sort === undefined ? hash : `${hash}\u0000${sort}`);

/**
 * A DynamoDB in memory, for the embedded control plane: the operations and semantics the AWS API
 * documents for single-item reads and conditional writes, Query and Scan on the table and its
 * secondary indexes (paging, 1 MB pages, filters, projections), batches, transactions, and tables.
 * Every operation runs to its end synchronously (one at a time, as if under one lock), so a
 * conditional write is atomic; the optional sink then keeps the change on disk before the answer.
 * Served over the wire by http-endpoint.ts and in-process by in-process-clients.ts.
 */
export class DynamoDbStore {
  private readonly tables = new Map<string, Table>();

  constructor(private readonly sink?: ChangeSink) {}

  /** Restores a table and its items (from the disk), with no change written. */
  restore(definition: TableDefinition, items: Iterable<Item>): void {
    const table = new Table(definition);
    for (const item of items) {
      const { hash, sort, size } = table.checkItem(item);
      table.put(hash, sort, item, size);
    }
    this.tables.set(definition.name, table);
  }

  /** The operation `name` (PutItem, Query, ...) with a request in DynamoDB's JSON form; throws DynamoDbStoreError as DynamoDB answers. */
  async execute(operation: string, input: Input): Promise<Output> {
    const changes: Change[] = [];
    const output = this.run(operation, input ?? {}, changes);
    if (changes.length > 0 && this.sink) await this.sink.write(changes);
    return output;
  }

  private run(operation: string, input: Input, changes: Change[]): Output {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) throw new ValidationError('The request body must be a JSON object');
    switch (operation) {
      case 'CreateTable':
        return this.createTable(input, changes);
      case 'DescribeTable':
        return { Table: this.describe(this.table(input.TableName, true), 'ACTIVE') };
      case 'DeleteTable': {
        const table = this.table(input.TableName, true);
        this.tables.delete(table.definition.name);
        changes.push({ kind: 'table', table: table.definition.name, definition: undefined });
        for (const item of table.items()) {
          const { hash, sort } = table.checkItem(item);
          changes.push({ kind: 'item', table: table.definition.name, key: itemDiskKey(hash, sort), item: undefined });
        }
        return { TableDescription: this.describe(table, 'DELETING') };
      }
      case 'ListTables':
        return this.listTables(input);
      case 'GetItem':
        return this.getItem(input);
      case 'PutItem':
        return this.putItem(input, changes);
      case 'UpdateItem':
        return this.updateItem(input, changes);
      case 'DeleteItem':
        return this.deleteItem(input, changes);
      case 'Query':
        return this.query(input);
      case 'Scan':
        return this.scan(input);
      case 'BatchGetItem':
        return this.batchGet(input);
      case 'BatchWriteItem':
        return this.batchWrite(input, changes);
      case 'TransactWriteItems':
        return this.transactWrite(input, changes);
      case 'TransactGetItems':
        return this.transactGet(input);
      default:
        throw new UnknownOperationError(operation);
    }
  }

  // ---- Tables ----------------------------------------------------------------------------------

  private table(name: unknown, describing = false): Table {
    if (typeof name !== 'string' || name === '')
      throw new ValidationError("1 validation error detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null");
    const table = this.tables.get(name);
    if (!table) throw new ResourceNotFoundError(describing ? `Requested resource not found: Table: ${name} not found` : 'Requested resource not found');
    return table;
  }

  private createTable(input: Input, changes: Change[]): Output {
    const name = input.TableName;
    if (typeof name !== 'string' || !TABLE_NAME.test(name))
      throw new ValidationError(`TableName must be 3 to 255 characters of a-z, A-Z, 0-9, '_', '-' and '.'`);
    if (this.tables.has(name)) throw new ResourceInUseError(`Table already exists: ${name}`);
    const definitions = (input.AttributeDefinitions ?? []) as { AttributeName: string; AttributeType: KeyType }[];
    const typeOfAttribute = (attribute: string): KeyType => {
      const found = definitions.find((d) => d.AttributeName === attribute);
      if (!found || !['S', 'N', 'B'].includes(found.AttributeType)) {
        throw new ValidationError(
          `One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [${attribute}], AttributeDefinitions: [${definitions.map((d) => d.AttributeName).join(', ')}]`,
        );
      }
      return found.AttributeType;
    };
    const schemaOf = (elements: unknown): KeySchema => {
      const list = (Array.isArray(elements) ? elements : []) as { AttributeName: string; KeyType: string }[];
      const hash = list.find((e) => e.KeyType === 'HASH');
      const range = list.find((e) => e.KeyType === 'RANGE');
      if (!hash || list.length > 2 || (list.length === 2 && !range))
        throw new ValidationError('Invalid KeySchema: a HASH key and at most one RANGE key are required');
      return {
        hash: hash.AttributeName,
        hashType: typeOfAttribute(hash.AttributeName),
        ...(range ? { range: range.AttributeName, rangeType: typeOfAttribute(range.AttributeName) } : {}),
      };
    };
    const schema = schemaOf(input.KeySchema);
    const indexes: IndexDefinition[] = [];
    for (const [kind, list] of [
      ['GLOBAL', input.GlobalSecondaryIndexes],
      ['LOCAL', input.LocalSecondaryIndexes],
    ] as const) {
      for (const index of (Array.isArray(list) ? list : []) as {
        IndexName: string;
        KeySchema: unknown;
        Projection?: { ProjectionType?: string; NonKeyAttributes?: string[] };
      }[]) {
        if (indexes.some((i) => i.name === index.IndexName))
          throw new ValidationError(`One or more parameter values were invalid: Duplicate index name: ${index.IndexName}`);
        const indexSchema = schemaOf(index.KeySchema);
        if (kind === 'LOCAL' && indexSchema.hash !== schema.hash)
          throw new ValidationError('One or more parameter values were invalid: Index KeySchema does not have the same leading hash key as table KeySchema');
        const type = (index.Projection?.ProjectionType ?? 'ALL') as 'ALL' | 'KEYS_ONLY' | 'INCLUDE';
        indexes.push({
          name: index.IndexName,
          kind,
          schema: indexSchema,
          projection: { type, ...(index.Projection?.NonKeyAttributes ? { nonKeyAttributes: index.Projection.NonKeyAttributes } : {}) },
        });
      }
    }
    const definition: TableDefinition = {
      name,
      schema,
      indexes,
      attributeDefinitions: definitions.map((d) => ({ AttributeName: d.AttributeName, AttributeType: d.AttributeType })),
      billingMode: input.BillingMode === 'PROVISIONED' || (input.BillingMode === undefined && input.ProvisionedThroughput) ? 'PROVISIONED' : 'PAY_PER_REQUEST',
      ...(input.ProvisionedThroughput ? { provisionedThroughput: input.ProvisionedThroughput as TableDefinition['provisionedThroughput'] } : {}),
      createdAt: Math.floor(Date.now() / 1000),
    };
    const table = new Table(definition);
    this.tables.set(name, table);
    changes.push({ kind: 'table', table: name, definition });
    // Usable at once; the answer says CREATING as AWS's does, and DescribeTable says ACTIVE.
    return { TableDescription: this.describe(table, 'CREATING') };
  }

  private describe(table: Table, status: string): Output {
    const d = table.definition;
    const arn = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${d.name}`;
    const keySchema = (s: KeySchema) => [{ AttributeName: s.hash, KeyType: 'HASH' }, ...(s.range ? [{ AttributeName: s.range, KeyType: 'RANGE' }] : [])];
    const indexes = (kind: 'GLOBAL' | 'LOCAL') =>
      d.indexes
        .filter((i) => i.kind === kind)
        .map((i) => ({
          IndexName: i.name,
          KeySchema: keySchema(i.schema),
          Projection: { ProjectionType: i.projection.type, ...(i.projection.nonKeyAttributes ? { NonKeyAttributes: i.projection.nonKeyAttributes } : {}) },
          ...(kind === 'GLOBAL'
            ? { IndexStatus: 'ACTIVE', ProvisionedThroughput: { ReadCapacityUnits: 0, WriteCapacityUnits: 0, NumberOfDecreasesToday: 0 } }
            : {}),
          IndexSizeBytes: 0,
          ItemCount: 0,
          IndexArn: `${arn}/index/${i.name}`,
        }));
    const global = indexes('GLOBAL');
    const local = indexes('LOCAL');
    return {
      TableName: d.name,
      TableArn: arn,
      TableId: `00000000-0000-0000-0000-${d.createdAt.toString(16).padStart(12, '0')}`,
      TableStatus: status,
      CreationDateTime: d.createdAt,
      AttributeDefinitions: d.attributeDefinitions,
      KeySchema: keySchema(d.schema),
      ItemCount: table.itemCount,
      TableSizeBytes: table.sizeBytes,
      ProvisionedThroughput: {
        ReadCapacityUnits: d.provisionedThroughput?.ReadCapacityUnits ?? 0,
        WriteCapacityUnits: d.provisionedThroughput?.WriteCapacityUnits ?? 0,
        NumberOfDecreasesToday: 0,
      },
      ...(d.billingMode === 'PAY_PER_REQUEST'
        ? { BillingModeSummary: { BillingMode: 'PAY_PER_REQUEST', LastUpdateToPayPerRequestDateTime: d.createdAt } }
        : {}),
      ...(global.length > 0 ? { GlobalSecondaryIndexes: global } : {}),
      ...(local.length > 0 ? { LocalSecondaryIndexes: local } : {}),
      DeletionProtectionEnabled: false,
    };
  }

  private listTables(input: Input): Output {
    const names = [...this.tables.keys()].sort();
    const start = typeof input.ExclusiveStartTableName === 'string' ? names.findIndex((n) => n > (input.ExclusiveStartTableName as string)) : 0;
    const limit = typeof input.Limit === 'number' ? input.Limit : 100;
    const page = names.slice(start === -1 ? names.length : start, (start === -1 ? names.length : start) + limit);
    const more = (start === -1 ? names.length : start) + limit < names.length;
    return { TableNames: page, ...(more ? { LastEvaluatedTableName: page[page.length - 1] } : {}) };
  }

  // ---- Single items ----------------------------------------------------------------------------

  private getItem(input: Input): Output {
    refuseLegacy(input, ['AttributesToGet']);
    const table = this.table(input.TableName);
    const key = normalizeKey(input.Key);
    const context = new ExpressionContext(names(input), undefined);
    const projection = bindExpression('ProjectionExpression', input.ProjectionExpression, (text) => bindProjection(parseProjection(text), context));
    refuseValues(input);
    context.checkAllUsed();
    const { hash, sort } = table.keyOf(key);
    const item = table.get(hash, sort);
    return { ...(item ? { Item: projection ? project(item, projection) : item } : {}), ...consumed(input, table, item, true) };
  }

  private putItem(input: Input, changes: Change[]): Output {
    refuseLegacy(input, ['Expected', 'ConditionalOperator']);
    const table = this.table(input.TableName);
    if (!isObject(input.Item))
      throw new ValidationError("1 validation error detected: Value null at 'item' failed to satisfy constraint: Member must not be null");
    const item = normalizeItem(input.Item as Record<string, unknown>);
    const returnValues = oneOf(input.ReturnValues, ['NONE', 'ALL_OLD'], 'ReturnValues', 'PutItem');
    const returnOld = returnsOldOnFailure(input, 'PutItem');
    const context = new ExpressionContext(names(input), values(input));
    const condition = bindExpression('ConditionExpression', input.ConditionExpression, (text) => bindCondition(parseCondition(text), context));
    context.checkAllUsed();
    const { hash, sort, size } = table.checkItem(item);
    const old = table.get(hash, sort);
    this.check(condition, old, returnOld);
    table.put(hash, sort, item, size);
    changes.push({ kind: 'item', table: table.definition.name, key: itemDiskKey(hash, sort), item });
    return { ...(returnValues === 'ALL_OLD' && old ? { Attributes: old } : {}), ...consumed(input, table, larger(old, item), false) };
  }

  private updateItem(input: Input, changes: Change[]): Output {
    refuseLegacy(input, ['AttributeUpdates', 'Expected', 'ConditionalOperator']);
    const table = this.table(input.TableName);
    const key = normalizeKey(input.Key);
    const returnValues = oneOf(input.ReturnValues, ['NONE', 'ALL_OLD', 'UPDATED_OLD', 'ALL_NEW', 'UPDATED_NEW'], 'ReturnValues', 'UpdateItem');
    const returnOld = returnsOldOnFailure(input, 'UpdateItem');
    const context = new ExpressionContext(names(input), values(input));
    const actions = bindExpression('UpdateExpression', input.UpdateExpression, (text) => bindUpdate(parseUpdate(text), context)) ?? [];
    const condition = bindExpression('ConditionExpression', input.ConditionExpression, (text) => bindCondition(parseCondition(text), context));
    context.checkAllUsed();
    const { hash, sort } = table.keyOf(key);
    const keyNames = [table.definition.schema.hash, ...(table.definition.schema.range ? [table.definition.schema.range] : [])];
    for (const action of actions) {
      if (keyNames.includes(action.path[0] as string))
        throw new ValidationError(
          `One or more parameter values were invalid: Cannot update attribute ${String(action.path[0])}. This attribute is part of the key`,
        );
    }
    const old = table.get(hash, sort);
    this.check(condition, old, returnOld);
    const item = applyUpdate(old ?? key, actions);
    const size = itemSize(item);
    if (size > MAX_ITEM_BYTES) throw new ValidationError('Item size to update has exceeded the maximum allowed size');
    table.checkItem(item, size);
    table.put(hash, sort, item, size);
    changes.push({ kind: 'item', table: table.definition.name, key: itemDiskKey(hash, sort), item });
    const paths: Path[] = actions.map((a) => a.path);
    let attributes: Item | undefined;
    if (returnValues === 'ALL_OLD') attributes = old;
    else if (returnValues === 'ALL_NEW') attributes = item;
    else if (returnValues === 'UPDATED_OLD') attributes = old && project(old, paths);
    else if (returnValues === 'UPDATED_NEW') attributes = project(item, paths);
    return { ...(attributes && Object.keys(attributes).length > 0 ? { Attributes: attributes } : {}), ...consumed(input, table, larger(old, item), false) };
  }

  private deleteItem(input: Input, changes: Change[]): Output {
    refuseLegacy(input, ['Expected', 'ConditionalOperator']);
    const table = this.table(input.TableName);
    const key = normalizeKey(input.Key);
    const returnValues = oneOf(input.ReturnValues, ['NONE', 'ALL_OLD'], 'ReturnValues', 'DeleteItem');
    const returnOld = returnsOldOnFailure(input, 'DeleteItem');
    const context = new ExpressionContext(names(input), values(input));
    const condition = bindExpression('ConditionExpression', input.ConditionExpression, (text) => bindCondition(parseCondition(text), context));
    context.checkAllUsed();
    const { hash, sort } = table.keyOf(key);
    const old = table.get(hash, sort);
    this.check(condition, old, returnOld);
    if (old) {
      table.delete(hash, sort);
      changes.push({ kind: 'item', table: table.definition.name, key: itemDiskKey(hash, sort), item: undefined });
    }
    return { ...(returnValues === 'ALL_OLD' && old ? { Attributes: old } : {}), ...consumed(input, table, old, false) };
  }

  /**
   * A failed condition is ConditionalCheckFailedException, with the item as the condition saw it when
   * ReturnValuesOnConditionCheckFailure asks (none when there was no item, as DynamoDB answers).
   */
  private check(condition: BoundCondition | undefined, old: Item | undefined, returnOld: boolean): void {
    if (!condition || evaluate(condition, old ?? {})) return;
    throw new ConditionalCheckFailedError(returnOld ? old : undefined);
  }

  // ---- Query and Scan ----------------------------------------------------------------------------

  private query(input: Input): Output {
    refuseLegacy(input, ['KeyConditions', 'QueryFilter', 'AttributesToGet', 'ConditionalOperator']);
    const table = this.table(input.TableName);
    const indexName = optionalString(input.IndexName, 'IndexName');
    const index = indexName === undefined ? undefined : table.index(indexName);
    if (indexName !== undefined && !index) throw new ValidationError(`The table does not have the specified index: ${indexName}`);
    if (index?.kind === 'GLOBAL' && input.ConsistentRead === true) throw new ValidationError('Consistent reads are not supported on global secondary indexes');
    const schema = index?.schema ?? table.definition.schema;
    if (typeof input.KeyConditionExpression !== 'string')
      throw new ValidationError('Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.');
    const context = new ExpressionContext(names(input), values(input));
    const keyCondition = bindExpression('KeyConditionExpression', input.KeyConditionExpression, (text) => bindCondition(parseCondition(text), context))!;
    const filter = bindExpression('FilterExpression', input.FilterExpression, (text) => bindCondition(parseCondition(text), context));
    const projection = bindExpression('ProjectionExpression', input.ProjectionExpression, (text) => bindProjection(parseProjection(text), context));
    context.checkAllUsed();
    const { hash, rangeCondition } = splitKeyCondition(keyCondition, schema);
    const select = selectOf(input, projection, index);
    const forward = input.ScanIndexForward !== false;
    const start = isObject(input.ExclusiveStartKey) ? normalizeItem(input.ExclusiveStartKey as Record<string, unknown>) : undefined;
    let after: Position | undefined;
    if (start) {
      if (index) {
        const position = table.indexPosition(index.name, start);
        if (position.hash !== hash) throw new ValidationError('The provided starting key is outside query boundaries based on provided conditions');
        after = position;
      } else {
        const { hash: startHash, sort } = table.keyOf(start);
        if (startHash !== hash) throw new ValidationError('The provided starting key is outside query boundaries based on provided conditions');
        after = { sort, tableHash: startHash, tableSort: sort };
      }
    }
    const source = table.partition(index?.name, hash, forward, after, rangeCondition ? boundsOf(rangeCondition) : {});
    return this.page(table, index, source, {
      input,
      filter,
      projection,
      select,
      ...(rangeCondition ? { keep: (item: Item) => evaluate(rangeCondition, item) } : {}),
    });
  }

  private scan(input: Input): Output {
    refuseLegacy(input, ['ScanFilter', 'AttributesToGet', 'ConditionalOperator']);
    const table = this.table(input.TableName);
    const indexName = optionalString(input.IndexName, 'IndexName');
    const index = indexName === undefined ? undefined : table.index(indexName);
    if (indexName !== undefined && !index) throw new ValidationError(`The table does not have the specified index: ${indexName}`);
    const context = new ExpressionContext(names(input), values(input));
    const filter = bindExpression('FilterExpression', input.FilterExpression, (text) => bindCondition(parseCondition(text), context));
    const projection = bindExpression('ProjectionExpression', input.ProjectionExpression, (text) => bindProjection(parseProjection(text), context));
    context.checkAllUsed();
    const select = selectOf(input, projection, index);
    const segments = input.TotalSegments === undefined ? undefined : { segment: Number(input.Segment), total: Number(input.TotalSegments) };
    if (
      segments &&
      !(
        Number.isInteger(segments.total) &&
        segments.total >= 1 &&
        segments.total <= 1_000_000 &&
        Number.isInteger(segments.segment) &&
        segments.segment >= 0 &&
        segments.segment < segments.total
      )
    ) {
      throw new ValidationError('The Segment parameter must be less than TotalSegments, both whole numbers (TotalSegments from 1 to 1000000)');
    }
    const start = isObject(input.ExclusiveStartKey) ? normalizeItem(input.ExclusiveStartKey as Record<string, unknown>) : undefined;
    const hashes = table.hashes(index?.name).filter((h) => !segments || segmentOf(h, segments.total) === segments.segment);
    const schema = index?.schema ?? table.definition.schema;
    function* source(): Generator<Item> {
      let i = 0;
      let after: Position | undefined;
      if (start) {
        let position: Position & { hash: string };
        if (index) {
          position = table.indexPosition(index.name, start);
        } else {
          const key = table.keyOf(start);
          position = { ...key, tableHash: key.hash, tableSort: key.sort };
        }
        i = hashes.findIndex((h) => h === position.hash);
        // The partition went away since: go on with the next one in order.
        if (i === -1) i = hashes.findIndex((h) => compareScalars(schema.hashType, h, position.hash) > 0);
        else after = position;
        if (i === -1) return;
      }
      for (; i < hashes.length; i++) {
        yield* table.partition(index?.name, hashes[i]!, true, after);
        after = undefined;
      }
    }
    return this.page(table, index, source(), { input, filter, projection, select });
  }

  /** One page of a Query or Scan: up to Limit items read or 1 MB, then the filter, the projection, and the key to go on from. */
  private page(
    table: Table,
    index: IndexDefinition | undefined,
    source: Iterable<Item>,
    options: { input: Input; filter?: BoundCondition | undefined; projection?: Path[] | undefined; select: string; keep?: (item: Item) => boolean },
  ): Output {
    const given = options.input.Limit;
    if (given !== undefined && !(typeof given === 'number' && Number.isInteger(given) && given >= 1)) {
      throw new ValidationError(
        `1 validation error detected: Value '${String(given)}' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1`,
      );
    }
    const limit = given ?? Infinity;
    const items: Item[] = [];
    let scanned = 0;
    let bytes = 0;
    let last: Item | undefined;
    let more = false;
    for (const stored of source) {
      if (scanned >= limit || bytes >= PAGE_BYTES) {
        more = true;
        break;
      }
      if (options.keep && !options.keep(stored)) continue;
      const item = index ? projectToIndex(table, index, stored) : stored;
      scanned++;
      bytes += itemSize(item);
      last = item;
      if (options.filter && !evaluate(options.filter, item)) continue;
      items.push(item);
    }
    // DynamoDB answers a LastEvaluatedKey whenever the page stopped at its limit, even if nothing follows.
    if (!more && scanned >= limit && last) more = true;
    const lastKey = more && last ? lastEvaluatedKey(table, index, last) : undefined;
    const out: Output = { Count: items.length, ScannedCount: scanned };
    if (options.select !== 'COUNT') out.Items = options.projection ? items.map((i) => project(i, options.projection!)) : items;
    if (lastKey) out.LastEvaluatedKey = lastKey;
    return { ...out, ...consumed(options.input, table, undefined, true, bytes) };
  }

  // ---- Batches and transactions ------------------------------------------------------------------

  private batchGet(input: Input): Output {
    const requests = input.RequestItems;
    if (!isObject(requests) || Object.keys(requests as object).length === 0)
      throw new ValidationError("1 validation error detected: Value null at 'requestItems' failed to satisfy constraint: Member must not be null");
    const responses: Record<string, Item[]> = {};
    const capacity = new Capacity();
    let total = 0;
    for (const [tableName, request] of Object.entries(requests as Record<string, Input>)) {
      refuseLegacy(request, ['AttributesToGet']);
      const table = this.table(tableName);
      const context = new ExpressionContext(names(request), undefined);
      const projection = bindExpression('ProjectionExpression', request.ProjectionExpression, (text) => bindProjection(parseProjection(text), context));
      context.checkAllUsed();
      const keys = (Array.isArray(request.Keys) ? request.Keys : []).map(normalizeKey);
      if (keys.length === 0)
        throw new ValidationError(
          "1 validation error detected: Value '[]' at 'requestItems.keys' failed to satisfy constraint: Member must have length greater than or equal to 1",
        );
      total += keys.length;
      if (total > BATCH_GET_MAX) throw new ValidationError(`Too many items requested for the BatchGetItem call`);
      const seen = new Set<string>();
      const found: Item[] = [];
      for (const key of keys) {
        const { hash, sort } = table.keyOf(key);
        const id = itemDiskKey(hash, sort);
        if (seen.has(id)) throw new ValidationError('Provided list of item keys contains duplicates');
        seen.add(id);
        const item = table.get(hash, sort);
        capacity.read(table, item, request.ConsistentRead === true);
        if (item) found.push(projection ? project(item, projection) : item);
      }
      responses[tableName] = found;
    }
    return { Responses: responses, UnprocessedKeys: {}, ...capacity.output(input) };
  }

  private batchWrite(input: Input, changes: Change[]): Output {
    const requests = input.RequestItems;
    if (!isObject(requests) || Object.keys(requests as object).length === 0)
      throw new ValidationError("1 validation error detected: Value null at 'requestItems' failed to satisfy constraint: Member must not be null");
    // Everything is checked before anything is written: a refused batch writes nothing, as DynamoDB's.
    const writes: { table: Table; hash: string; sort: string | undefined; size?: number; item?: Item }[] = [];
    for (const [tableName, list] of Object.entries(requests as Record<string, unknown>)) {
      const table = this.table(tableName);
      const seen = new Set<string>();
      for (const request of (Array.isArray(list) ? list : []) as { PutRequest?: { Item?: unknown }; DeleteRequest?: { Key?: unknown } }[]) {
        let write: (typeof writes)[number];
        if (request.PutRequest && !request.DeleteRequest) {
          if (!isObject(request.PutRequest.Item))
            throw new ValidationError(
              "1 validation error detected: Value null at 'requestItems.member.putRequest.item' failed to satisfy constraint: Member must not be null",
            );
          const item = normalizeItem(request.PutRequest.Item as Record<string, unknown>);
          write = { table, ...table.checkItem(item), item };
        } else if (request.DeleteRequest && !request.PutRequest) {
          write = { table, ...table.keyOf(normalizeKey(request.DeleteRequest.Key)) };
        } else {
          throw new ValidationError('Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes');
        }
        const id = itemDiskKey(write.hash, write.sort);
        if (seen.has(id)) throw new ValidationError('Provided list of item keys contains duplicates');
        seen.add(id);
        writes.push(write);
      }
    }
    if (writes.length === 0)
      throw new ValidationError(
        "1 validation error detected: Value at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: Member must have length greater than or equal to 1",
      );
    if (writes.length > BATCH_WRITE_MAX)
      throw new ValidationError(
        "1 validation error detected: Value at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: Member must have length less than or equal to 25",
      );
    const capacity = new Capacity();
    for (const write of writes) {
      capacity.write(write.table, larger(write.table.get(write.hash, write.sort), write.item));
      if (write.item) write.table.put(write.hash, write.sort, write.item, write.size!);
      else write.table.delete(write.hash, write.sort);
      changes.push({ kind: 'item', table: write.table.definition.name, key: itemDiskKey(write.hash, write.sort), item: write.item });
    }
    return { UnprocessedItems: {}, ...capacity.output(input) };
  }

  private transactWrite(input: Input, changes: Change[]): Output {
    const items = Array.isArray(input.TransactItems) ? (input.TransactItems as Input[]) : [];
    if (items.length === 0 || items.length > TRANSACT_MAX)
      throw new ValidationError(
        `1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length between 1 and ${TRANSACT_MAX}`,
      );
    // Every action is checked and prepared against the items as they are; all conditions hold, or nothing is written.
    const prepared: {
      table: Table;
      hash: string;
      sort: string | undefined;
      condition?: BoundCondition;
      apply?: (old: Item | undefined) => { item: Item; size: number } | undefined;
      returnOld: boolean;
    }[] = [];
    const seen = new Set<string>();
    for (const entry of items) {
      const kinds = ['ConditionCheck', 'Put', 'Delete', 'Update'].filter((k) => entry[k] !== undefined);
      if (kinds.length !== 1) throw new ValidationError('TransactItems can only contain one of Check, Put, Update or Delete');
      const kind = kinds[0]!;
      const action = entry[kind] as Input;
      const table = this.table(action.TableName);
      const context = new ExpressionContext(names(action), values(action));
      const condition = bindExpression('ConditionExpression', action.ConditionExpression, (text) => bindCondition(parseCondition(text), context));
      let position: { hash: string; sort: string | undefined };
      let apply: ((old: Item | undefined) => { item: Item; size: number } | undefined) | undefined;
      if (kind === 'Put') {
        const item = normalizeItem((action.Item ?? {}) as Record<string, unknown>);
        const checked = table.checkItem(item);
        position = checked;
        apply = () => ({ item, size: checked.size });
      } else {
        const key = normalizeKey(action.Key);
        position = table.keyOf(key);
        if (kind === 'Delete') apply = () => undefined;
        if (kind === 'Update') {
          const actions = bindExpression('UpdateExpression', action.UpdateExpression, (text) => bindUpdate(parseUpdate(text), context));
          if (!actions) throw new ValidationError('The UpdateExpression of an Update in TransactItems is required');
          apply = (old) => {
            const item = applyUpdate(old ?? key, actions);
            return { item, size: table.checkItem(item).size };
          };
        }
        if (kind === 'ConditionCheck' && !condition) throw new ValidationError('The ConditionExpression of a ConditionCheck is required');
      }
      context.checkAllUsed();
      const id = `${table.definition.name}\u0000${itemDiskKey(position.hash, position.sort)}`;
      if (seen.has(id)) throw new ValidationError('Transaction request cannot include multiple operations on one item');
      seen.add(id);
      const returnOld = returnsOldOnFailure(action, 'TransactWriteItems');
      prepared.push({ table, ...position, ...(condition ? { condition } : {}), ...(apply ? { apply } : {}), returnOld });
    }
    const reasons: CancellationReason[] = prepared.map((p) => {
      const old = p.table.get(p.hash, p.sort);
      if (!p.condition || evaluate(p.condition, old ?? {})) return { Code: 'None' };
      return { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed', ...(p.returnOld && old ? { Item: old } : {}) };
    });
    if (reasons.some((r) => r.Code !== 'None')) throw new TransactionCanceledError(reasons);
    const results = prepared.map((p) => (p.apply ? p.apply(p.table.get(p.hash, p.sort)) : 'unchanged'));
    // Two writes of every item, a condition check's too (its item is prepared and committed as the others).
    const capacity = new Capacity();
    prepared.forEach((p, i) => {
      const result = results[i];
      capacity.write(p.table, larger(p.table.get(p.hash, p.sort), result === 'unchanged' ? undefined : result?.item), TRANSACTIONAL);
      if (result === 'unchanged') return;
      if (result === undefined) p.table.delete(p.hash, p.sort);
      else p.table.put(p.hash, p.sort, result.item, result.size);
      changes.push({ kind: 'item', table: p.table.definition.name, key: itemDiskKey(p.hash, p.sort), item: result?.item });
    });
    return capacity.output(input);
  }

  private transactGet(input: Input): Output {
    const items = Array.isArray(input.TransactItems) ? (input.TransactItems as Input[]) : [];
    if (items.length === 0 || items.length > TRANSACT_MAX)
      throw new ValidationError(
        `1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length between 1 and ${TRANSACT_MAX}`,
      );
    const capacity = new Capacity();
    const responses = items.map((entry) => {
      const get = entry.Get as Input | undefined;
      if (!isObject(get)) throw new ValidationError('TransactItems of TransactGetItems must each hold a Get');
      const table = this.table(get.TableName);
      const context = new ExpressionContext(names(get), undefined);
      const projection = bindExpression('ProjectionExpression', get.ProjectionExpression, (text) => bindProjection(parseProjection(text), context));
      context.checkAllUsed();
      const { hash, sort } = table.keyOf(normalizeKey(get.Key));
      const item = table.get(hash, sort);
      capacity.read(table, item, true, TRANSACTIONAL);
      return item ? { Item: projection ? project(item, projection) : item } : {};
    });
    return { Responses: responses, ...capacity.output(input) };
  }

  /** A copy of every table's definition and items (for a snapshot, and tests). */
  *dump(): Generator<{ definition: TableDefinition; items: Item[] }> {
    for (const table of this.tables.values()) yield { definition: table.definition, items: [...table.items()].map(cloneItem) };
  }
}

// ---- Request helpers ---------------------------------------------------------------------------

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function normalizeKey(key: unknown): Item {
  if (!isObject(key)) throw new ValidationError("1 validation error detected: Value null at 'key' failed to satisfy constraint: Member must not be null");
  return normalizeItem(key);
}

/** Whether a write asks for the item back when its condition fails; validated on every request, as DynamoDB does, not only on a failure. */
function returnsOldOnFailure(input: Input, operation: string): boolean {
  return oneOf(input.ReturnValuesOnConditionCheckFailure, ['NONE', 'ALL_OLD'], 'ReturnValuesOnConditionCheckFailure', operation) === 'ALL_OLD';
}

function names(input: Input): Record<string, string> | undefined {
  const names = input.ExpressionAttributeNames;
  if (names === undefined || names === null) return undefined;
  if (!isObject(names) || Object.keys(names).length === 0) throw new ValidationError('ExpressionAttributeNames must not be empty');
  for (const [key, value] of Object.entries(names)) {
    if (!/^#[0-9a-zA-Z_]+$/.test(key)) throw new ValidationError(`ExpressionAttributeNames contains invalid key: Syntax error; key: "${key}"`);
    if (typeof value !== 'string' || value === '')
      throw new ValidationError(`ExpressionAttributeNames contains invalid value: Empty attribute name for key ${key}`);
  }
  return names as Record<string, string>;
}

function values(input: Input): Record<string, AttributeValue> | undefined {
  const values = input.ExpressionAttributeValues;
  if (values === undefined || values === null) return undefined;
  if (!isObject(values) || Object.keys(values).length === 0) throw new ValidationError('ExpressionAttributeValues must not be empty');
  const out: Record<string, AttributeValue> = {};
  for (const [key, value] of Object.entries(values)) {
    if (!/^:[0-9a-zA-Z_]+$/.test(key)) throw new ValidationError(`ExpressionAttributeValues contains invalid key: Syntax error; key: "${key}"`);
    try {
      out[key] = normalizeValue(value);
    } catch (err) {
      if (err instanceof ValidationError) throw new ValidationError(`ExpressionAttributeValues contains invalid value: ${err.message} for key ${key}`);
      throw err;
    }
  }
  return out;
}

/** A request that reads only (GetItem, BatchGet) may not carry ExpressionAttributeValues. */
function refuseValues(input: Input): void {
  if (input.ExpressionAttributeValues !== undefined)
    throw new ValidationError('ExpressionAttributeValues can only be specified when using expressions: ConditionExpression is null');
}

/** The parameters DynamoDB kept from before expressions: the embedded store takes expressions only, and says so. */
function refuseLegacy(input: Input, parameters: string[]): void {
  for (const parameter of parameters) {
    if (input[parameter] !== undefined)
      throw new ValidationError(`The embedded DynamoDB does not take the legacy parameter ${parameter}: use the expression parameters instead`);
  }
}

function bindExpression<T>(kind: string, text: unknown, bind: (text: string) => T): T | undefined {
  if (text === undefined || text === null) return undefined;
  if (typeof text !== 'string') throw new ValidationError(`${kind} must be a string`);
  try {
    return bind(text);
  } catch (err) {
    if (err instanceof ValidationError) throw new ValidationError(`Invalid ${kind}: ${err.message}`);
    throw err;
  }
}

function oneOf(value: unknown, allowed: string[], field: string, operation: string): string {
  if (value === undefined || value === null) return allowed[0]!;
  if (typeof value !== 'string' || !allowed.includes(value)) {
    throw new ValidationError(`${field} ${String(value)} is not valid for ${operation}: it must be one of ${allowed.join(', ')}`);
  }
  return value;
}

function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new ValidationError(`${field} must be a string`);
  return value;
}

function selectOf(input: Input, projection: Path[] | undefined, index: IndexDefinition | undefined): string {
  const select = input.Select ?? (projection ? 'SPECIFIC_ATTRIBUTES' : index ? 'ALL_PROJECTED_ATTRIBUTES' : 'ALL_ATTRIBUTES');
  if (!['ALL_ATTRIBUTES', 'ALL_PROJECTED_ATTRIBUTES', 'SPECIFIC_ATTRIBUTES', 'COUNT'].includes(select as string))
    throw new ValidationError(`Select ${String(select)} is not one of ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES, SPECIFIC_ATTRIBUTES, COUNT`);
  if (projection && select !== 'SPECIFIC_ATTRIBUTES') throw new ValidationError('Cannot specify the ProjectionExpression when choosing to get ALL_ATTRIBUTES');
  if (select === 'ALL_PROJECTED_ATTRIBUTES' && !index) throw new ValidationError('ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName');
  if (select === 'ALL_ATTRIBUTES' && index && index.projection.type !== 'ALL' && index.kind === 'GLOBAL')
    throw new ValidationError(
      'One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index ' +
        index.name +
        ' because its projection type is not ALL',
    );
  return select as string;
}

/**
 * A KeyConditionExpression split into the partition key's value and the sort-key condition, with
 * DynamoDB's rules: `hash = :v`, optionally AND one condition on the sort key (=, <, <=, >, >=,
 * BETWEEN, begins_with), nothing else.
 */
function splitKeyCondition(condition: BoundCondition, schema: KeySchema): { hash: string; rangeCondition?: BoundCondition } {
  const parts: BoundCondition[] = [];
  const collect = (c: BoundCondition) => {
    if (c.kind === 'and') {
      collect(c.left);
      collect(c.right);
    } else {
      parts.push(c);
    }
  };
  collect(condition);
  let hash: string | undefined;
  let rangeCondition: BoundCondition | undefined;
  const attributeOf = (o: BoundOperand): string | undefined => {
    if (o.kind === 'size') throw new ValidationError('Invalid KeyConditionExpression: KeyConditionExpressions cannot contain nested operations');
    if (o.kind !== 'path') return undefined;
    if (o.path.length > 1) throw new ValidationError('Invalid KeyConditionExpression: KeyConditionExpressions cannot have conditions on nested attributes');
    return o.path[0] as string;
  };
  for (const part of parts) {
    let attribute: string | undefined;
    if (part.kind === 'compare') {
      if (part.op === '<>') throw new ValidationError('Invalid KeyConditionExpression: Invalid operator used in KeyConditionExpression: <>');
      const left = attributeOf(part.left);
      const right = attributeOf(part.right);
      if (left && right)
        throw new ValidationError(
          'Invalid KeyConditionExpression: Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition',
        );
      attribute = left ?? right;
    } else if (part.kind === 'between') {
      attribute = attributeOf(part.operand);
      if (!attribute)
        throw new ValidationError(
          'Invalid KeyConditionExpression: Invalid condition in KeyConditionExpression: BETWEEN operator must have the key attribute as its first operand',
        );
    } else if (part.kind === 'function' && part.name === 'begins_with') {
      attribute = attributeOf(part.args[0]!);
      if (!attribute)
        throw new ValidationError(
          'Invalid KeyConditionExpression: Invalid condition in KeyConditionExpression: begins_with operator must have the key attribute as its first operand',
        );
    } else {
      throw new ValidationError(
        `Invalid KeyConditionExpression: Invalid operator used in KeyConditionExpression: ${part.kind === 'function' ? part.name : part.kind.toUpperCase()}`,
      );
    }
    if (!attribute) throw new ValidationError('Invalid KeyConditionExpression: Invalid condition in KeyConditionExpression: No key attribute specified');
    if (attribute === schema.hash) {
      if (hash !== undefined) throw new ValidationError('Invalid KeyConditionExpression: KeyConditionExpressions must only contain one condition per key');
      if (part.kind !== 'compare' || part.op !== '=') throw new ValidationError('Query key condition not supported');
      const value = part.left.kind === 'value' ? part.left.value : (part.right as { value: AttributeValue }).value;
      if (typeOf(value) !== schema.hashType)
        throw new ValidationError('One or more parameter values were invalid: Condition parameter type does not match schema type');
      hash = (value as { S?: string }).S ?? (value as { N?: string }).N ?? (value as { B: string }).B;
    } else if (attribute === schema.range) {
      if (rangeCondition) throw new ValidationError('Invalid KeyConditionExpression: KeyConditionExpressions must only contain one condition per key');
      const operands =
        part.kind === 'compare' ? [part.left, part.right] : part.kind === 'between' ? [part.low, part.high] : part.kind === 'function' ? part.args : [];
      for (const operand of operands) {
        if (operand.kind === 'value' && typeOf(operand.value) !== schema.rangeType)
          throw new ValidationError('One or more parameter values were invalid: Condition parameter type does not match schema type');
      }
      rangeCondition = part;
    } else {
      throw new ValidationError(`Query condition missed key schema element: ${schema.hash}`);
    }
  }
  if (hash === undefined) throw new ValidationError(`Query condition missed key schema element: ${schema.hash}`);
  return { hash, ...(rangeCondition ? { rangeCondition } : {}) };
}

/** The sort-key range a key condition selects (the condition is still checked on each item read). */
function boundsOf(condition: BoundCondition): SortBounds {
  const valueOf = (o: BoundOperand | undefined): string | undefined => {
    if (o?.kind !== 'value') return undefined;
    const v = o.value as { S?: string; N?: string; B?: string };
    return v.S ?? v.N ?? v.B;
  };
  if (condition.kind === 'between') {
    const low = valueOf(condition.low);
    const high = valueOf(condition.high);
    return {
      ...(low !== undefined ? { low: { value: low, inclusive: true } } : {}),
      ...(high !== undefined ? { high: { value: high, inclusive: true } } : {}),
    };
  }
  if (condition.kind === 'function') {
    const prefix = condition.args[1];
    return prefix?.kind === 'value' && 'S' in prefix.value ? { prefix: prefix.value.S } : {};
  }
  if (condition.kind !== 'compare') return {};
  // `:v < sk` is `sk > :v`: read the operator from the key's side.
  const keyOnLeft = condition.left.kind === 'path';
  const value = valueOf(keyOnLeft ? condition.right : condition.left);
  if (value === undefined) return {};
  const flipped: Record<string, string> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=', '=': '=' };
  const op = keyOnLeft ? condition.op : flipped[condition.op]!;
  switch (op) {
    case '=':
      return { low: { value, inclusive: true }, high: { value, inclusive: true } };
    case '<':
      return { high: { value, inclusive: false } };
    case '<=':
      return { high: { value, inclusive: true } };
    case '>':
      return { low: { value, inclusive: false } };
    case '>=':
      return { low: { value, inclusive: true } };
    default:
      return {};
  }
}

/** The attributes an index holds of an item: all, the keys only, or the keys and the named ones. */
function projectToIndex(table: Table, index: IndexDefinition, item: Item): Item {
  if (index.projection.type === 'ALL') return item;
  const keep = new Set([
    table.definition.schema.hash,
    table.definition.schema.range,
    index.schema.hash,
    index.schema.range,
    ...(index.projection.nonKeyAttributes ?? []),
  ]);
  const out: Item = {};
  for (const name in item) if (keep.has(name)) out[name] = item[name]!;
  return out;
}

function lastEvaluatedKey(table: Table, index: IndexDefinition | undefined, item: Item): Item {
  const key = table.keyAttributes(item);
  if (index) Object.assign(key, table.keyAttributes(item, index.schema));
  return key;
}

/** A hash key's scan segment: a stable spread of partitions over TotalSegments. */
function segmentOf(hash: string, total: number): number {
  let h = 0;
  for (let i = 0; i < hash.length; i++) h = (Math.imul(h, 31) + hash.charCodeAt(i)) | 0;
  return Math.abs(h) % total;
}

/**
 * Request units of one item as DynamoDB's on-demand mode bills them: one per KB written, one per 4 KB read
 * (half for an eventually consistent read), at least one; twice that in a transaction.
 */
function requestUnits(bytes: number, kind: 'read' | 'write', consistent: boolean, transactional = false): number {
  const units = Math.max(1, Math.ceil(bytes / (kind === 'read' ? 4096 : 1024)));
  return (transactional ? 2 : 1) * (kind === 'read' && !consistent && !transactional ? units / 2 : units);
}

const TRANSACTIONAL = true;

/** A write is billed on the larger of the item before and after it (a delete: the item it removed). */
function larger(before: Item | undefined, after: Item | undefined): Item | undefined {
  if (!before || !after) return before ?? after;
  return itemSize(before) >= itemSize(after) ? before : after;
}

/** ConsumedCapacity when asked (TOTAL or INDEXES), with its read and write units (requestUnits). */
function consumed(input: Input, table: Table, item: Item | undefined, read: boolean, bytes?: number): Output {
  const mode = input.ReturnConsumedCapacity;
  if (mode !== 'TOTAL' && mode !== 'INDEXES') return {};
  const units = requestUnits(bytes ?? (item ? itemSize(item) : 0), read ? 'read' : 'write', input.ConsistentRead === true);
  return { ConsumedCapacity: capacityOf(table.definition.name, read ? units : 0, read ? 0 : units, mode) };
}

function capacityOf(tableName: string, read: number, write: number, mode: 'TOTAL' | 'INDEXES'): Record<string, unknown> {
  const units = { CapacityUnits: read + write, ...(read > 0 ? { ReadCapacityUnits: read } : {}), ...(write > 0 ? { WriteCapacityUnits: write } : {}) };
  return { TableName: tableName, ...units, ...(mode === 'INDEXES' ? { Table: units } : {}) };
}

/** The units of a batch or transaction, per table: its ConsumedCapacity is a list, one entry per table. */
class Capacity {
  private readonly tables = new Map<string, { read: number; write: number }>();

  read(table: Table, item: Item | undefined, consistent: boolean, transactional = false): void {
    this.add(table).read += requestUnits(item ? itemSize(item) : 0, 'read', consistent, transactional);
  }

  write(table: Table, item: Item | undefined, transactional = false): void {
    this.add(table).write += requestUnits(item ? itemSize(item) : 0, 'write', true, transactional);
  }

  output(input: Input): Output {
    const mode = input.ReturnConsumedCapacity;
    if (mode !== 'TOTAL' && mode !== 'INDEXES') return {};
    return { ConsumedCapacity: [...this.tables].map(([name, units]) => capacityOf(name, units.read, units.write, mode)) };
  }

  private add(table: Table): { read: number; write: number } {
    const name = table.definition.name;
    let units = this.tables.get(name);
    if (!units) this.tables.set(name, (units = { read: 0, write: 0 }));
    return units;
  }
}

export { DynamoDbStoreError };
