import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { jsonNestingProblem } from '../core/document-text';
import { listenHttp, type HttpListener } from '../api/http-listener';
import { TaskTokenError } from './task-tokens';
import { localExecutionArn, type ExecutionRecord, type ExecutionStatus, type HistoryEntry, type LocalStepFunctions } from './local-step-functions';

import { DISCOVERY_PATH, type ControlPlaneEndpoints } from '../control-plane/endpoints';

/** The region of the local engine's ARNs (arn:aws:states:local:...); clients configure their SDK with it. */
export const LOCAL_REGION = 'local';

const TARGET_PREFIX = 'AWSStepFunctions.';
const CONTENT_TYPE = 'application/x-amz-json-1.0';
const DEFAULT_PAGE = 100;
/** AWS caps an execution name at 80 characters of letters, digits, '-' and '_'. */
const EXECUTION_NAME = /^[A-Za-z0-9_-]{1,80}$/;

/** An AWS error answer: `__type` is the exception's name, as the SDK's JSON 1.0 protocol reads it. */
class ServiceError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

type Request = Record<string, unknown>;
type Operation = (request: Request) => Promise<unknown>;
/** Answers a request of its own API and returns true, or returns false without touching it. */
export type Route = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

/**
 * A Step Functions-compatible endpoint over the local engine: AWS JSON 1.0, so the real
 * `@aws-sdk/client-sfn` works unchanged with an endpoint override. StopExecution aborts as on AWS
 * (no Catch, no cleanup: drained nodes stay drained); the CRUS-safe stop is the store's cancel
 * request (`rollout session cancel`). SendTaskSuccess, SendTaskFailure and SendTaskHeartbeat
 * reach the engine's callback tasks (`.waitForTaskToken`) by their tokens. ListStateMachines,
 * DescribeStateMachine and DescribeStateMachineForExecution describe the workflows it runs.
 */
export class StepFunctionsEndpoint {
  private readonly operations: Record<string, Operation>;

  constructor(
    private readonly engine: LocalStepFunctions,
    /** The endpoints of the discovery route, once the server listens. */
    private readonly discovery: () => ControlPlaneEndpoints | undefined = () => undefined,
    /** Other APIs served on the same port (the scheduler's, the events'): each answers its own requests. */
    private readonly routes: readonly Route[] = [],
  ) {
    this.operations = {
      StartExecution: (r) => this.startExecution(r),
      DescribeExecution: async (r) => describe(this.known(r)),
      ListExecutions: async (r) => this.listExecutions(r),
      StopExecution: (r) => this.stopExecution(r),
      GetExecutionHistory: async (r) => getExecutionHistory(this.known(r), r),
      SendTaskSuccess: async (r) => this.withToken(r, (token) => this.engine.tokens.succeed(token, stringField(r, 'output', true))),
      SendTaskFailure: async (r) => this.withToken(r, (token) => this.engine.tokens.fail(token, stringField(r, 'error'), stringField(r, 'cause'))),
      SendTaskHeartbeat: async (r) => this.withToken(r, (token) => this.engine.tokens.heartbeat(token)),
      ListStateMachines: async (r) => this.listStateMachines(r),
      DescribeStateMachine: async (r) => describeStateMachine(this.knownStateMachine(stringField(r, 'stateMachineArn', true))),
      DescribeStateMachineForExecution: async (r) => {
        const { name, arn, definition, createdAt } = this.knownStateMachine(this.known(r).stateMachineArn);
        return { stateMachineArn: arn, name, definition, roleArn: LOCAL_ROLE_ARN, updateDate: seconds(createdAt) };
      },
    };
  }

  /** Every workflow the control plane runs, as `aws stepfunctions list-state-machines` lists them. */
  private listStateMachines(request: Request): unknown {
    const page = paginate(this.engine.stateMachines(), request);
    return {
      stateMachines: page.items.map(({ arn, name, createdAt }) => ({ stateMachineArn: arn, name, type: 'STANDARD', creationDate: seconds(createdAt) })),
      ...(page.nextToken ? { nextToken: page.nextToken } : {}),
    };
  }

  private knownStateMachine(stateMachineArn: string): ReturnType<LocalStepFunctions['stateMachines']>[number] {
    const found = this.engine.stateMachines().find((machine) => machine.arn === stateMachineArn);
    if (!found) throw new ServiceError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${stateMachineArn}'`);
    return found;
  }

  /** Handles one HTTP request (a node:http listener). */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    for (const route of this.routes) if (await route(req, res)) return;
    if (req.method === 'GET' && req.url === DISCOVERY_PATH) {
      const endpoints = this.discovery();
      if (!endpoints) return send(res, 404, 'application/json', { message: 'no discovery on this endpoint' });
      return send(res, 200, 'application/json', endpoints);
    }
    const target = String(req.headers['x-amz-target'] ?? '');
    try {
      if (req.method !== 'POST' || !target.startsWith(TARGET_PREFIX))
        throw new ServiceError('UnknownOperationException', `expected a POST with X-Amz-Target: ${TARGET_PREFIX}<Operation>`);
      const operation = this.operations[target.slice(TARGET_PREFIX.length)];
      if (!operation) throw new ServiceError('UnknownOperationException', `${target} is not an operation of this endpoint`);
      const body = await readBody(req);
      let request: Request;
      try {
        request = (body ? JSON.parse(body) : {}) as Request;
      } catch {
        throw new ServiceError('SerializationException', 'the request body is not JSON');
      }
      send(res, 200, CONTENT_TYPE, await operation(request));
    } catch (err) {
      if (err instanceof ServiceError) return send(res, 400, CONTENT_TYPE, { __type: err.type, message: err.message });
      send(res, 500, CONTENT_TYPE, { __type: 'InternalServerError', message: err instanceof Error ? err.message : String(err) });
    }
  }

  /** Serves on `port` (0: an ephemeral one) of `host`, loopback unless given. */
  listen(port = 0, host = '127.0.0.1'): Promise<HttpListener> {
    return listenHttp((req, res) => void this.handle(req, res), port, host);
  }

  /** The callback tasks' API: AWS's exceptions for a token that is unknown or used (TaskDoesNotExist), or whose task timed out or stopped (TaskTimedOut). */
  private withToken(request: Request, act: (token: string) => void): unknown {
    const token = stringField(request, 'taskToken', true);
    if (token.length > 2048) throw new ServiceError('InvalidToken', 'Invalid Token: a task token has at most 2048 characters');
    try {
      act(token);
    } catch (err) {
      if (err instanceof TaskTokenError) throw new ServiceError(err.code, err.message);
      throw err;
    }
    return {};
  }

  private known(request: Request): ExecutionRecord {
    const arn = stringField(request, 'executionArn', true);
    const record = this.engine.execution(arn);
    if (!record) throw new ServiceError('ExecutionDoesNotExist', `Execution Does Not Exist: '${arn}'`);
    return record;
  }

  private async startExecution(request: Request): Promise<unknown> {
    const stateMachineArn = stringField(request, 'stateMachineArn', true);
    if (!this.engine.hasStateMachine(stateMachineArn)) throw new ServiceError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${stateMachineArn}'`);
    const name = stringField(request, 'name') || randomUUID();
    if (!EXECUTION_NAME.test(name)) throw new ServiceError('InvalidName', `Invalid Name: '${name}'`);
    const inputText = stringField(request, 'input') || '{}';
    // The engine copies inputs as JSON, which recursion cannot do past a few thousand levels: refused first.
    const tooDeep = jsonNestingProblem(inputText);
    if (tooDeep) throw new ServiceError('InvalidExecutionInput', `Invalid State Machine Execution Input: ${tooDeep.message}`);
    let input: unknown;
    try {
      input = JSON.parse(inputText);
    } catch {
      throw new ServiceError('InvalidExecutionInput', 'Invalid State Machine Execution Input: the input is not JSON');
    }
    const existing = this.engine.execution(localExecutionArn(stateMachineArn, name));
    if (existing) {
      // As AWS: a start repeated while running with the same input is idempotent; otherwise the name is taken.
      if (existing.status === 'RUNNING' && JSON.stringify(existing.input) === JSON.stringify(input)) {
        return { executionArn: existing.executionArn, startDate: seconds(existing.startDate) };
      }
      throw new ServiceError('ExecutionAlreadyExists', `Execution Already Exists: '${existing.executionArn}'`);
    }
    const started = this.engine.start(stateMachineArn, input, name);
    void started.outcome.catch(() => undefined);
    return { executionArn: started.executionArn, startDate: seconds(this.engine.execution(started.executionArn)!.startDate) };
  }

  private listExecutions(request: Request): unknown {
    const stateMachineArn = stringField(request, 'stateMachineArn', true);
    if (!this.engine.hasStateMachine(stateMachineArn)) throw new ServiceError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${stateMachineArn}'`);
    const statusFilter = stringField(request, 'statusFilter') as ExecutionStatus | '';
    const records = this.engine.listExecutions(stateMachineArn).filter((record) => !statusFilter || record.status === statusFilter);
    const page = paginate(records, request);
    return {
      executions: page.items.map((record) => ({
        executionArn: record.executionArn,
        stateMachineArn: record.stateMachineArn,
        name: record.name,
        status: record.status,
        startDate: seconds(record.startDate),
        ...(record.stopDate !== undefined ? { stopDate: seconds(record.stopDate) } : {}),
      })),
      ...(page.nextToken ? { nextToken: page.nextToken } : {}),
    };
  }

  private async stopExecution(request: Request): Promise<unknown> {
    const record = this.known(request);
    const error = stringField(request, 'error');
    const cause = stringField(request, 'cause');
    await this.engine.stop(record.executionArn, error || undefined, cause || undefined);
    return { stopDate: seconds(record.stopDate ?? record.startDate) };
  }
}

/**
 * The role DescribeStateMachine names: the embedded engine runs its functions in-process, under no IAM
 * role; AWS's answer always has one, so clients that read it get this placeholder (account 000000000000).
 */
const LOCAL_ROLE_ARN = 'arn:aws:iam::000000000000:role/rollout-embedded-engine';

function describeStateMachine({ name, arn, definition, createdAt }: ReturnType<LocalStepFunctions['stateMachines']>[number]): unknown {
  return {
    stateMachineArn: arn,
    name,
    status: 'ACTIVE',
    definition,
    roleArn: LOCAL_ROLE_ARN,
    type: 'STANDARD',
    creationDate: seconds(createdAt),
    loggingConfiguration: { level: 'OFF', includeExecutionData: false },
  };
}

function describe(record: ExecutionRecord): unknown {
  return {
    executionArn: record.executionArn,
    stateMachineArn: record.stateMachineArn,
    name: record.name,
    status: record.status,
    startDate: seconds(record.startDate),
    ...(record.stopDate !== undefined ? { stopDate: seconds(record.stopDate) } : {}),
    input: JSON.stringify(record.input),
    inputDetails: { included: true },
    ...(record.output !== undefined ? { output: JSON.stringify(record.output), outputDetails: { included: true } } : {}),
    ...(record.error !== undefined ? { error: record.error } : {}),
    ...(record.cause !== undefined ? { cause: record.cause } : {}),
  };
}

/** The events the engine reports: execution started/succeeded/failed/aborted (with input, output, error, cause), states entered/exited (names only), Map iterations. */
function getExecutionHistory(record: ExecutionRecord, request: Request): unknown {
  const includeData = request.includeExecutionData !== false;
  const events = record.history.map((entry, index) => ({
    id: index + 1,
    previousEventId: index,
    timestamp: seconds(entry.timestamp),
    type: entry.type,
    ...historyDetails(entry, record, includeData),
  }));
  if (request.reverseOrder === true) events.reverse();
  const page = paginate(events, request);
  return { events: page.items, ...(page.nextToken ? { nextToken: page.nextToken } : {}) };
}

function historyDetails(entry: HistoryEntry, record: ExecutionRecord, includeData: boolean): Record<string, unknown> {
  const failure = { ...(entry.error !== undefined ? { error: entry.error } : {}), ...(entry.cause !== undefined ? { cause: entry.cause } : {}) };
  switch (entry.type) {
    case 'ExecutionStarted':
      return { executionStartedEventDetails: { ...(includeData ? { input: JSON.stringify(record.input) } : {}), inputDetails: { truncated: false } } };
    case 'ExecutionSucceeded':
      return { executionSucceededEventDetails: { ...(includeData && record.output !== undefined ? { output: JSON.stringify(record.output) } : {}) } };
    case 'ExecutionFailed':
      return { executionFailedEventDetails: { error: entry.error ?? record.error, cause: entry.cause ?? record.cause } };
    case 'ExecutionAborted':
      return {
        executionAbortedEventDetails: {
          ...(record.error !== undefined ? { error: record.error } : {}),
          ...(record.cause !== undefined ? { cause: record.cause } : {}),
          ...failure,
        },
      };
    case 'ExecutionTimedOut':
      return { executionTimedOutEventDetails: failure };
    case 'MapIterationStarted':
    case 'MapIterationSucceeded':
    case 'MapIterationFailed':
      return { [`${lowerFirst(entry.type)}EventDetails`]: { name: entry.stateName } };
    default:
      if (entry.type.endsWith('StateEntered')) {
        return { stateEnteredEventDetails: { name: entry.stateName } };
      }
      if (entry.type.endsWith('StateExited')) {
        return { stateExitedEventDetails: { name: entry.stateName } };
      }
      return {};
  }
}

function paginate<T>(items: T[], request: Request): { items: T[]; nextToken?: string } {
  const maxResults = typeof request.maxResults === 'number' && request.maxResults > 0 ? request.maxResults : DEFAULT_PAGE;
  const token = stringField(request, 'nextToken');
  const offset = token ? Number(Buffer.from(token, 'base64url').toString('utf8')) : 0;
  if (!Number.isInteger(offset) || offset < 0) throw new ServiceError('InvalidToken', `Invalid Token: '${token}'`);
  const end = offset + maxResults;
  return { items: items.slice(offset, end), ...(end < items.length ? { nextToken: Buffer.from(String(end)).toString('base64url') } : {}) };
}

function stringField(request: Request, field: string, required = false): string {
  const value = request[field];
  if (value === undefined || value === null) {
    if (required)
      throw new ServiceError(
        'ValidationException',
        `1 validation error detected: Value null at '${field}' failed to satisfy constraint: Member must not be null`,
      );
    return '';
  }
  if (typeof value !== 'string') throw new ServiceError('ValidationException', `'${field}' must be a string`);
  if (required && value === '') throw new ServiceError('ValidationException', `'${field}' must not be empty`);
  return value;
}

/** Timestamps go over AWS JSON as epoch seconds. */
const seconds = (ms: number) => ms / 1000;
const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, contentType: string, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
