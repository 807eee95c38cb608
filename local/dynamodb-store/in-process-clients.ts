import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  DynamoDBServiceException,
  ResourceInUseException,
  ResourceNotFoundException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, type TranslateConfig } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall, type marshallOptions, type unmarshallOptions } from '@aws-sdk/util-dynamodb';
import type { AttributeValue, Item } from './attribute-values';
import { DynamoDbStoreError } from './errors';
import type { DynamoDbStore } from './store';

/**
 * Told of each command as it ends: its name, its output (undefined when it failed; with its ConsumedCapacity for an
 * operation that consumes request units) and its wire-shaped input.
 */
export type CommandListener = (commandName: string, output: Record<string, unknown> | undefined, input: Record<string, unknown>) => void;

/** The operations that consume request units (and report them when asked: ReturnConsumedCapacity). */
export const METERED = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
  'TransactWriteItems',
  'TransactGetItems',
]);

const LISTENERS = Symbol.for('baremetal-rollout.dynamodb.in-process-listeners');

/** The listeners of a client built here; undefined for any other client (which counts with middleware). */
export function inProcessListeners(client: DynamoDBClient): Set<CommandListener> | undefined {
  return (client as unknown as { [LISTENERS]?: Set<CommandListener> })[LISTENERS];
}

/**
 * SDK clients whose commands run on the store in this process: the same DynamoDBClient and
 * DynamoDBDocumentClient classes, configured for the store's wire endpoint, but `send` hands each
 * command straight to the store instead of serialising, signing and sending it over loopback HTTP
 * (which took most of an increment's time: ~2.6 ms of CPU per request). What a caller sees is what
 * the SDK would give: the DocumentClient's own marshalling rules (the same key nodes and options),
 * outputs as the SDK deserialises them (binaries as Uint8Array), errors as the SDK's exception
 * classes with AWS's names and messages. A DocumentClient built on the raw client elsewhere
 * (`DynamoDBDocumentClient.from(rawClient)`) takes the SDK's path to the wire endpoint, to the same store.
 */
export function inProcessClients(
  store: DynamoDbStore,
  endpoint: string,
  translateConfig: TranslateConfig,
): { rawClient: DynamoDBClient; client: DynamoDBDocumentClient } {
  const rawClient = new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const client = DynamoDBDocumentClient.from(rawClient, translateConfig);
  const listeners = new Set<CommandListener>();
  Object.defineProperty(rawClient, LISTENERS, { value: listeners });

  const marshallOptions: marshallOptions = {
    ...translateConfig.marshallOptions,
    convertTopLevelContainer: translateConfig.marshallOptions?.convertTopLevelContainer ?? true,
  };
  const unmarshallOptions: unmarshallOptions = {
    ...translateConfig.unmarshallOptions,
    convertWithoutMapWrapper: translateConfig.unmarshallOptions?.convertWithoutMapWrapper ?? true,
  };

  const execute = async (commandName: string, input: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const operation = commandName.replace(/Command$/, '');
    // Listeners are told the request units each command consumed (countRequests): asked for here, and left out of
    // what the caller gets unless it asked itself.
    const metered = listeners.size > 0 && METERED.has(operation) && input.ReturnConsumedCapacity === undefined;
    let output: Record<string, unknown> | undefined;
    try {
      output = await store.execute(operation, metered ? { ...input, ReturnConsumedCapacity: 'TOTAL' } : input);
      if (!metered) return output;
      const { ConsumedCapacity: _, ...asked } = output;
      return asked;
    } catch (err) {
      throw err instanceof DynamoDbStoreError ? sdkError(err) : err;
    } finally {
      for (const listener of listeners) listener(commandName, output, input);
    }
  };

  const sendRaw = async (command: { input: Record<string, unknown>; constructor: { name: string } }) => {
    const output = await execute(command.constructor.name, command.input);
    return { ...(sdkShape(output) as Record<string, unknown>), $metadata: metadata(200) };
  };
  const sendDocument = async (command: DocumentCommand) => {
    const lowLevel = command.clientCommand;
    const input = processKeys(command.input, command.inputKeyNodes, (value) => marshall(value, marshallOptions));
    const output = await execute(lowLevel.constructor.name, input as Record<string, unknown>);
    // unmarshall builds new objects, so the store's own need not be copied first: only its binaries become bytes.
    const unmarshalled = processKeys(withBytes(output) as Record<string, unknown>, command.outputKeyNodes, (value) =>
      unmarshall(value as Record<string, never>, unmarshallOptions),
    );
    return { ...(unmarshalled as Record<string, unknown>), $metadata: metadata(200) };
  };
  overrideSend(rawClient, sendRaw as never);
  overrideSend(client, sendDocument as never);
  return { rawClient, client };
}

/** What the DocumentClient's commands carry: their native input and where in it the marshalling applies. */
interface DocumentCommand {
  input: Record<string, unknown>;
  inputKeyNodes: KeyNodes;
  outputKeyNodes: KeyNodes;
  clientCommand: { constructor: { name: string } };
}

/** Replaces `send` on this instance (promise and callback forms), keeping the class and everything else of the client. */
function overrideSend(target: { send: unknown }, send: (command: never) => Promise<unknown>): void {
  Object.defineProperty(target, 'send', {
    value: (command: never, optionsOrCallback?: unknown, callback?: unknown) => {
      const cb = (typeof optionsOrCallback === 'function' ? optionsOrCallback : callback) as ((err: unknown, data?: unknown) => void) | undefined;
      const result = send(command);
      if (!cb) return result;
      result.then(
        (data) => cb(null, data),
        (err: unknown) => cb(err),
      );
      return undefined;
    },
    // Writable, as the SDK's own send is: a test may wrap a client (Object.create) and put its own send on the wrapper.
    writable: true,
    configurable: true,
  });
}

function metadata(httpStatusCode: number) {
  return { httpStatusCode, attempts: 1, totalRetryDelay: 0 };
}

// ---- The DocumentClient's marshalling, as lib-dynamodb applies it (commands/utils.js there) ----------

/** lib-dynamodb's key-node trees: `null` marks a value to convert, `{}` every value of an object, `[]` every member, `*` each entry. */
type KeyNodes = { [key: string]: KeyNodes | null } | KeyNodes[] | null;

function processKeys(obj: unknown, keyNodes: KeyNodes, convert: (value: unknown) => unknown): unknown {
  if (obj === undefined) return undefined;
  if (keyNodes === null) return convert(obj);
  const keys = Object.keys(keyNodes);
  if (keys.length === 0) return processAll(obj, convert);
  if (keys.length === 1 && keys[0] === '*') {
    const next = (keyNodes as Record<string, KeyNodes>)['*']!;
    if (Array.isArray(obj)) return obj.filter((v) => typeof v !== 'function').map((v) => processKeys(v, next, convert));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(obj as Record<string, unknown>)) if (typeof v !== 'function') out[k] = processKeys(v, next, convert);
    return out;
  }
  let out: Record<string, unknown> | unknown[];
  if (Array.isArray(obj)) {
    out = obj.filter((v) => typeof v !== 'function');
  } else {
    out = {};
    for (const [k, v] of Object.entries(obj as Record<string, unknown>)) if (typeof v !== 'function') out[k] = v;
  }
  for (const [key, nodes] of Object.entries(keyNodes as Record<string, KeyNodes>)) {
    const value = (obj as Record<string, unknown>)[key];
    if (typeof value === 'function') continue;
    const processed = processKeys(value, nodes, convert);
    if (processed !== undefined && typeof processed !== 'function') (out as Record<string, unknown>)[key] = processed;
  }
  return out;
}

function processAll(obj: unknown, convert: (value: unknown) => unknown): unknown {
  if (Array.isArray(obj)) return obj.filter((v) => typeof v !== 'function').map((v) => processKeys(v, null, convert));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj as Record<string, unknown>)) {
    if (typeof value === 'function') continue;
    const processed = processKeys(value, null, convert);
    if (processed !== undefined && typeof processed !== 'function') out[key] = processed;
  }
  return out;
}

// ---- Outputs and errors in the SDK's shapes --------------------------------------------------------

/**
 * An output (or error member) as the SDK deserialises it: a fresh copy (never the store's own
 * objects), binaries as bytes. Only AttributeValue positions hold `B`/`BS`, and no other member of
 * DynamoDB's outputs is named so.
 */
function sdkShape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sdkShape);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (key === 'B' && typeof member === 'string') out.B = new Uint8Array(Buffer.from(member, 'base64'));
    else if (key === 'BS' && Array.isArray(member)) out.BS = member.map((m: string) => new Uint8Array(Buffer.from(m, 'base64')));
    else out[key] = sdkShape(member);
  }
  return out;
}

/** `value` with its binaries as bytes: the same object where it holds none, a copy along the way to those it holds. */
function withBytes(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const converted = withBytes(value[i]);
      if (converted !== value[i]) (out ??= [...value])[i] = converted;
    }
    return out ?? value;
  }
  let out: Record<string, unknown> | undefined;
  for (const key in value) {
    const member = (value as Record<string, unknown>)[key];
    let converted: unknown;
    if (key === 'B' && typeof member === 'string') converted = new Uint8Array(Buffer.from(member, 'base64'));
    else if (key === 'BS' && Array.isArray(member)) converted = member.map((m: string) => new Uint8Array(Buffer.from(m, 'base64')));
    else converted = withBytes(member);
    if (converted !== member) (out ??= { ...(value as Record<string, unknown>) })[key] = converted;
  }
  return out ?? value;
}

/** The SDK's exception for an error the store raised: the modeled class where the SDK has one, its service exception otherwise. */
function sdkError(err: DynamoDbStoreError): Error {
  const common = { message: err.message, $metadata: metadata(err.statusCode) };
  switch (err.code) {
    case 'ConditionalCheckFailedException':
      return new ConditionalCheckFailedException({ ...common, ...(err.extra.Item ? { Item: sdkShape(err.extra.Item) as Record<string, never> } : {}) });
    case 'ResourceNotFoundException':
      return new ResourceNotFoundException(common);
    case 'ResourceInUseException':
      return new ResourceInUseException(common);
    case 'TransactionCanceledException':
      return new TransactionCanceledException({ ...common, Message: err.message, CancellationReasons: sdkShape(err.extra.CancellationReasons) as never });
    default:
      return new DynamoDBServiceException({ ...common, name: err.code, $fault: err.statusCode >= 500 ? 'server' : 'client' });
  }
}

export type { AttributeValue, Item };
