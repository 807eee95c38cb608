import { AsyncLocalStorage } from 'node:async_hooks';
import './polyfills';
import { readFileSync } from 'node:fs';
import { ExecutionAbortedError, StateMachine } from 'aws-local-stepfunctions';
import { placeholderValues, resolvePlaceholders } from '../contracts';
import type { TimeSource } from '../time/sim-clock';
import { historyEventsOf, type EngineEvent } from './history-events';
import { markValidated, wasValidated } from './validated-definitions';
import { namedError, TaskTokens, type TaskTimers } from './task-tokens';

/** A function the local engine runs in place of a Lambda: takes the payload, returns the result. */
export type LocalFunction = (payload: unknown) => Promise<unknown>;

const ACCOUNT = '000000000000';
const REGION = 'local';
export const localFunctionArn = (name: string) => `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`;
export const localStateMachineArn = (name: string) => `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:${name}`;
const executionArn = (machine: string, name: string) => `arn:aws:states:${REGION}:${ACCOUNT}:execution:${machine}:${name}`;
/** The ARN an execution named `name` of this state machine gets. */
export const localExecutionArn = (stateMachineArn: string, name: string) => executionArn(stateMachineArn.slice(stateMachineArn.lastIndexOf(':') + 1), name);

export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'ABORTED';

/**
 * One event of an execution's history, as the engine reports it (AWS type names: ExecutionStarted,
 * TaskStateEntered, ...). State events keep their state's name, not its data: a fleet-sized run has
 * hundreds of thousands of them, and the execution's own input and output are kept on its record.
 */
export interface HistoryEntry {
  type: string;
  /** ms on the engine's clock (simulated time). */
  timestamp: number;
  stateName?: string;
  error?: string;
  cause?: string;
}

/** What the engine keeps of every execution, by ARN, for DescribeExecution, ListExecutions and GetExecutionHistory. */
export interface ExecutionRecord {
  executionArn: string;
  stateMachineArn: string;
  name: string;
  status: ExecutionStatus;
  input: unknown;
  output?: unknown;
  error?: string;
  cause?: string;
  /** ms on the engine's clock. */
  startDate: number;
  stopDate?: number;
  history: HistoryEntry[];
}

/** Figures of one execution, in AWS terms. */
export interface ExecutionFigures {
  executionArn: string;
  historyEvents: number;
  stateTransitions: number;
  lambdaInvocations: number;
  /**
   * What Lambda would bill for them: each invocation's duration in this process (the handler, its site
   * and DynamoDB calls), rounded up to the millisecond as Lambda rounds it.
   */
  lambdaBilledMs: number;
  largestPayloadBytes: number;
  /** The state whose input or output that was. */
  largestPayloadState?: string;
}

export interface ExecutionOutcome {
  executionArn: string;
  status: 'SUCCEEDED' | 'FAILED' | 'ABORTED';
  output?: unknown;
  error?: string;
  cause?: string;
  figures: ExecutionFigures;
}

export interface LocalStepFunctionsOptions {
  functions: Record<string, LocalFunction>;
  /** Simulated time: Wait states sleep on it, and on virtual time every function call counts as work in progress. */
  time: TimeSource;
  /** Real milliseconds before a Retry attempt (default 0 on virtual time: a retry takes no simulated time; 1 on scaled time). */
  retryIntervalMs?: number;
}

/** The error of executions ended because virtual time stalled with them still open. */
export const STALLED_ERROR = 'LocalEngine.Stalled';

/**
 * A Wait state runs as a Task whose local handler sleeps on the time source (the engine's own Wait
 * sleeps on the wall clock). The engine evaluates the duration's path into these parameters.
 */
const WAIT_RESOURCE = 'arn:aws:lambda:local:000000000000:function:LocalWait';
/** Task timeouts run on the wall clock: a sleeping Wait, or a Task AWS gives no timeout, must never hit one (setTimeout's limit is ~24.8 days). */
const WAIT_TIMEOUT_SECONDS = 2_000_000;
interface WaitParameters {
  seconds?: number;
  timestamp?: string;
  input: unknown;
}

interface Registered {
  name: string;
  arn: string;
  definition: Record<string, unknown>;
  /** The definition as deployed (substitutions made): what DescribeStateMachine answers. */
  text: string;
  /** When it was registered, on the engine's clock (epoch ms). */
  createdAt: number;
  /** Names of the Wait states (run as Tasks; counted as Waits). */
  waits: Set<string>;
  /** Callback tasks (`.waitForTaskToken`) by state name, with their timers (run on the engine's clock, not the engine's wall-clock timeout). */
  callbacks: Map<string, TaskTimers>;
  machine: StateMachine;
}

type StateDefinition = Record<string, unknown> & { Type: string };

interface OpenExecution {
  abort: () => void;
  stalled?: string;
  /** Set by stop(): the StopExecution's error and cause. */
  stopped?: { error?: string; cause?: string };
}

/** The function an invocation runs, for the calls it makes (a test attributes each DynamoDB call to its function with it). */
export const invokedFunction = new AsyncLocalStorage<string>();

/**
 * The embedded Step Functions: runs the workflow files as they are deployed (the `${...}` ARNs
 * substituted as CDK does), with Lambda functions run in-process behind the `lambda:invoke`
 * contract (`{Payload}` in and out, errors as `{Error, Cause}` with the Lambda error JSON),
 * `states:startExecution` (continue-as-new, or a child not waited for) and `startExecution.sync:2` (child workflows).
 */
export class LocalStepFunctions {
  private readonly machines = new Map<string, Registered>();
  private readonly running = new Set<Promise<ExecutionOutcome>>();
  private readonly continuations = new Map<string, Promise<ExecutionOutcome>>();
  /** Open executions, to end them if virtual time stalls. */
  private readonly open = new Map<string, OpenExecution>();
  readonly executions: ExecutionFigures[] = [];
  /** Every execution started, by ARN, in start order. */
  private readonly records = new Map<string, ExecutionRecord>();
  private readonly outcomes = new Map<string, Promise<ExecutionOutcome>>();
  private counter = 0;
  private readonly time: TimeSource;
  /** The callback tasks waiting for SendTaskSuccess / SendTaskFailure (the endpoint and in-process callers reach them here). */
  readonly tokens: TaskTokens;

  constructor(private readonly options: LocalStepFunctionsOptions) {
    this.time = options.time;
    this.tokens = new TaskTokens(this.time);
    this.time.onStall(() => this.endStalled());
  }

  /**
   * Loads a workflow file as CloudFormation deploys it: `${<Name>FunctionArn}` of each of `functions`
   * and `${<Name>StateMachineArn}` of each of `children` become local ARNs (the resolver of contracts/,
   * which fails on a placeholder without a value and on a value without a placeholder).
   */
  register(name: string, source: { file: string; functions: readonly string[]; children: readonly string[] }): string {
    const values = placeholderValues(source.functions, source.children, { functionArn: localFunctionArn, stateMachineArn: localStateMachineArn });
    const text = resolvePlaceholders(source.file, readFileSync(source.file, 'utf8'), values);
    const definition = JSON.parse(text) as Record<string, unknown>;
    // The engine mutates the definition it is given: hand it a copy. A JSON copy, not structuredClone:
    // under jest that returns objects of another realm, which the engine's plain-object check rejects.
    const runnable = JSON.parse(text) as Record<string, unknown>;
    const waits = new Set<string>();
    const callbacks = new Map<string, TaskTimers>();
    for (const [stateName, state] of allStates(runnable)) {
      if (state.Type === 'Task' && String(state.Resource).endsWith(CALLBACK_SUFFIX)) callbacks.set(stateName, runCallbackWithToken(name, stateName, state));
      // AWS sets no timeout on a Task without TimeoutSeconds; the engine's default is 60 s of wall time, which
      // failed a group's task-graph child (startExecution.sync:2) with States.Timeout against a real site.
      if (state.Type === 'Task' && state.TimeoutSeconds === undefined && state.TimeoutSecondsPath === undefined) state.TimeoutSeconds = WAIT_TIMEOUT_SECONDS;
      if (state.Type !== 'Wait') continue;
      waits.add(stateName);
      runWaitAsTask(state);
    }
    // Validated once (per text, remembered across processes): the validator compiles its schemas at every
    // call (~0.15 s a machine), which made every embedded runtime's start cost most of a second.
    const validated = wasValidated(text);
    const machine = new StateMachine(runnable as never, { validationOptions: validated ? { noValidate: true } : { checkArn: true, checkPaths: true } });
    if (!validated) markValidated(text);
    const arn = localStateMachineArn(name);
    this.machines.set(arn, { name, arn, definition, text, createdAt: this.time.now(), waits, callbacks, machine });
    return arn;
  }

  /** The registered state machines, in registration order: what ListStateMachines and DescribeStateMachine answer. */
  stateMachines(): { name: string; arn: string; definition: string; createdAt: number }[] {
    return [...this.machines.values()].map(({ name, arn, text, createdAt }) => ({ name, arn, definition: text, createdAt }));
  }

  /** Starts an execution and returns its outcome once it ends (not following continue-as-new). */
  start(stateMachineArn: string, input: unknown, name = `exec-${++this.counter}`): { executionArn: string; outcome: Promise<ExecutionOutcome> } {
    const registered = this.machines.get(stateMachineArn);
    if (!registered) throw new Error(`no local state machine ${stateMachineArn}`);
    const arn = executionArn(registered.name, name);
    const startDate = this.time.now();
    this.records.set(arn, { executionArn: arn, stateMachineArn, name, status: 'RUNNING', input, startDate, history: [] });
    const outcome = this.run(registered, arn, name, input).then((ended) => {
      const record = this.records.get(arn)!;
      Object.assign(record, {
        status: ended.status,
        stopDate: this.time.now(),
        ...(ended.output !== undefined ? { output: ended.output } : {}),
        ...(ended.error !== undefined ? { error: ended.error } : {}),
        ...(ended.cause !== undefined ? { cause: ended.cause } : {}),
      });
      return ended;
    });
    this.running.add(outcome);
    this.outcomes.set(arn, outcome);
    void outcome.finally(() => this.running.delete(outcome));
    return { executionArn: arn, outcome };
  }

  /** The execution of this ARN, or undefined. */
  execution(executionArn: string): ExecutionRecord | undefined {
    return this.records.get(executionArn);
  }

  /** How the execution of this ARN ends (not the executions it continues as); undefined for an unknown ARN. */
  outcome(executionArn: string): Promise<ExecutionOutcome> | undefined {
    return this.outcomes.get(executionArn);
  }

  /** The executions of a state machine, newest first (as ListExecutions orders them). */
  listExecutions(stateMachineArn: string): ExecutionRecord[] {
    return [...this.records.values()].filter((record) => record.stateMachineArn === stateMachineArn).reverse();
  }

  /** Whether this ARN names a registered state machine. */
  hasStateMachine(stateMachineArn: string): boolean {
    return this.machines.has(stateMachineArn);
  }

  /**
   * Aborts a running execution as StopExecution does (or as if its process died): no Catch, no
   * cleanup; it ends ABORTED with this error and cause at once, and this returns once it has ended.
   * What it wrote stays; its locks stay held until their lease runs out (crash tests, takeovers). An execution that already ended
   * stays as it is; undefined for an unknown ARN.
   */
  async stop(executionArn: string, error?: string, cause?: string): Promise<ExecutionRecord | undefined> {
    const record = this.records.get(executionArn);
    const open = this.open.get(executionArn);
    if (open && !open.stopped) {
      open.stopped = { ...(error !== undefined ? { error } : {}), ...(cause !== undefined ? { cause } : {}) };
      open.abort();
    }
    await this.outcomes.get(executionArn)?.catch(() => undefined);
    return record;
  }

  /**
   * Stops every execution still open, as the process ending would (a closing runtime): each ends
   * ABORTED at once; what they wrote stays, for the next process of the data directory to resume.
   */
  async stopAll(cause: string): Promise<void> {
    await Promise.all([...this.open.keys()].map((arn) => this.stop(arn, 'States.Aborted', cause)));
  }

  /** Runs an execution and every execution it continued as, returning the last one's outcome. */
  async runToEnd(stateMachineArn: string, input: unknown, name?: string): Promise<ExecutionOutcome> {
    return this.follow(this.start(stateMachineArn, input, name).outcome);
  }

  /** The outcome of the last execution in the chain that `first` starts by continuing as new. */
  async follow(first: Promise<ExecutionOutcome>): Promise<ExecutionOutcome> {
    let outcome = await first;
    for (;;) {
      const next = this.continuations.get(outcome.executionArn);
      if (!next) return outcome;
      outcome = await next;
    }
  }

  private async run(registered: Registered, arn: string, name: string, input: unknown): Promise<ExecutionOutcome> {
    const figures: ExecutionFigures = {
      executionArn: arn,
      historyEvents: 0,
      stateTransitions: 0,
      lambdaInvocations: 0,
      lambdaBilledMs: 0,
      largestPayloadBytes: 0,
    };
    this.executions.push(figures);
    // Ends this execution's sleeping Waits when it stops, so no timer outlives it.
    const waits = new AbortController();
    const execution = registered.machine.run(input as never, {
      overrides: {
        taskResourceLocalHandlers: this.taskHandlers(registered, arn, figures, waits.signal),
        retryIntervalOverrides: this.retryOverrides(registered.definition),
      },
      context: {
        Execution: { Id: arn, Name: name, Input: input as never, StartTime: new Date(this.time.now()).toISOString() },
        StateMachine: { Id: registered.arn, Name: registered.name },
      } as never,
    });
    const open: OpenExecution = {
      abort: () => {
        execution.abort();
        waits.abort();
      },
    };
    this.open.set(arn, open);
    const counting = this.countEvents(execution.eventLogs as AsyncIterable<EngineEvent>, figures, registered.waits, arn);
    try {
      const output = await execution.result;
      await counting;
      return { executionArn: arn, status: 'SUCCEEDED', output, figures };
    } catch (err) {
      await counting.catch(() => undefined);
      if (err instanceof ExecutionAbortedError) {
        if (open.stalled) return { executionArn: arn, status: 'FAILED', error: STALLED_ERROR, cause: open.stalled, figures };
        return { executionArn: arn, status: 'ABORTED', ...open.stopped, figures };
      }
      // ExecutionError wraps what ended the run: a Fail state's error (name = Error, message = Cause) or a runtime error.
      const inner = (err instanceof Error && err.cause instanceof Error ? err.cause : err) as Error;
      return { executionArn: arn, status: 'FAILED', error: inner.name, cause: inner.message, figures };
    } finally {
      this.open.delete(arn);
      waits.abort();
    }
  }

  /** Virtual time stalled: nothing runs, nothing sleeps, so every open execution would wait forever. End them, saying so. */
  private endStalled(): void {
    // A task waiting for its token waits for the outside (an operator's SendTaskSuccess), not for time: not a stall.
    if (this.open.size === 0 || this.tokens.waiting > 0) return;
    const cause = `virtual time stalled: no task runs and no Wait is pending, yet ${[...this.open.keys()].join(', ')} did not end`;
    for (const open of this.open.values()) {
      open.stalled = cause;
      open.abort();
    }
  }

  private async countEvents(events: AsyncIterable<EngineEvent>, figures: ExecutionFigures, waits: Set<string>, arn: string): Promise<void> {
    const history = this.records.get(arn)?.history;
    for await (const raw of events) {
      // A Wait runs as a Task here; its history is a Wait's.
      const event = raw.state?.name !== undefined && waits.has(raw.state.name) ? { ...raw, state: { ...raw.state, type: 'Wait' } } : raw;
      const entry = historyEntryOf(event, this.time.now());
      if (entry) history?.push(entry);
      figures.historyEvents += historyEventsOf(event);
      if (event.type === 'StateEntered') figures.stateTransitions++;
      const payload = event.type === 'StateEntered' ? event.state?.input : event.type === 'StateExited' ? event.state?.output : undefined;
      const bytes = byteSize(payload);
      if (bytes > figures.largestPayloadBytes) {
        figures.largestPayloadBytes = bytes;
        figures.largestPayloadState = event.state?.name;
      }
    }
  }

  private taskHandlers(registered: Registered, parentArn: string, figures: ExecutionFigures, stopped: AbortSignal) {
    const handlers: Record<string, (input: unknown) => Promise<unknown>> = {};
    for (const [stateName, state] of allStates(registered.definition)) {
      if (state.Type === 'Wait') {
        handlers[stateName] = async (input) => {
          const wait = input as WaitParameters;
          const seconds = wait.seconds ?? (Date.parse(wait.timestamp!) - this.time.now()) / 1000;
          await this.time.sleep(seconds, stopped);
          return wait.input;
        };
        continue;
      }
      if (state.Type !== 'Task') continue;
      const resource = String(state.Resource);
      if (resource === 'arn:aws:states:::lambda:invoke') {
        handlers[stateName] = async (input) => {
          const { FunctionName, Payload } = input as { FunctionName: string; Payload: unknown };
          throwIfStopped(stopped);
          figures.lambdaInvocations++;
          return { StatusCode: 200, ExecutedVersion: '$LATEST', Payload: await this.invoke(FunctionName, Payload, figures) };
        };
      } else if (resource.startsWith('arn:aws:lambda:')) {
        handlers[stateName] = async (input) => {
          throwIfStopped(stopped);
          figures.lambdaInvocations++;
          return this.invoke(resource, input, figures);
        };
      } else if (resource === `arn:aws:states:::lambda:invoke${CALLBACK_SUFFIX}`) {
        // The callback pattern: the function gets the token in its payload; the task ends with SendTaskSuccess/Failure.
        const timers = registered.callbacks.get(stateName)!;
        handlers[stateName] = async (evaluated) => {
          const { timers: taskTimers, input } = timersOf(stateName, timers, evaluated as Record<string, unknown>);
          const task = this.tokens.open(stateName, taskTimers, stopped);
          const { FunctionName, Payload } = withToken(input, task.token) as { FunctionName: string; Payload: unknown };
          figures.lambdaInvocations++;
          task.output.catch(() => undefined); // awaited below; it may end (a stop) while the function still runs
          try {
            await this.invoke(FunctionName, Payload, figures);
          } catch (err) {
            // A function error fails the task at once, as on AWS; its token can no longer be used.
            this.tokens.abandon(task.token);
            throw err;
          }
          return task.output;
        };
      } else if (resource === 'arn:aws:states:::states:startExecution') {
        handlers[stateName] = async (input) => {
          const { StateMachineArn, Input, Name } = input as { StateMachineArn: string; Input: unknown; Name?: string };
          throwIfStopped(stopped);
          const existing = Name === undefined ? undefined : this.records.get(localExecutionArn(StateMachineArn, Name));
          if (existing) {
            // As StartExecution answers a name taken: the same execution while it runs with the same input, else a conflict.
            if (existing.status !== 'RUNNING' || JSON.stringify(existing.input) !== JSON.stringify(Input)) {
              throw namedError('StepFunctions.ExecutionAlreadyExistsException', `Execution Already Exists: '${existing.executionArn}'`);
            }
            return { ExecutionArn: existing.executionArn, StartDate: new Date(existing.startDate).toISOString() };
          }
          const child = this.start(StateMachineArn, Input, Name);
          // Continue-as-new is a start of the execution's own machine: follow() goes on with it. Another machine's is a child it does not wait for.
          if (StateMachineArn === registered.arn) this.continuations.set(parentArn, child.outcome);
          return { ExecutionArn: child.executionArn, StartDate: new Date(this.time.now()).toISOString() };
        };
      } else if (resource === 'arn:aws:states:::states:startExecution.sync:2') {
        handlers[stateName] = async (input) => {
          const { StateMachineArn, Input, Name } = input as { StateMachineArn: string; Input: unknown; Name?: string };
          throwIfStopped(stopped);
          // That execution's end, as on AWS: not the end of executions it continues as (a parent that needs those polls for them).
          const outcome = await this.start(StateMachineArn, Input, Name).outcome;
          if (outcome.status !== 'SUCCEEDED') {
            throw namedError('States.TaskFailed', JSON.stringify({ ExecutionArn: outcome.executionArn, Error: outcome.error, Cause: outcome.cause }));
          }
          return { ExecutionArn: outcome.executionArn, Status: 'SUCCEEDED', Output: outcome.output };
        };
      } else {
        throw new Error(`${registered.name}: state '${stateName}' uses ${resource}, which the embedded engine does not run`);
      }
    }
    return handlers as never;
  }

  private async invoke(functionArn: string, payload: unknown, figures: ExecutionFigures): Promise<unknown> {
    const name = functionArn.slice(functionArn.lastIndexOf(':') + 1);
    const fn = this.options.functions[name];
    if (!fn) throw namedError('Lambda.ResourceNotFoundException', `Function not found: ${functionArn}`);
    const started = performance.now();
    try {
      // A JSON round trip, as over the wire: handlers never share objects with the engine.
      const request = JSON.parse(JSON.stringify(payload)) as unknown;
      return JSON.parse(JSON.stringify((await this.time.busy(() => invokedFunction.run(name, () => fn(request)))) ?? null)) as unknown;
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      // As Lambda reports a function error: Error is the error's name, Cause the error JSON.
      throw namedError(e.name, JSON.stringify({ errorType: e.name, errorMessage: e.message }));
    } finally {
      figures.lambdaBilledMs += Math.ceil(performance.now() - started);
    }
  }

  private retryOverrides(definition: Record<string, unknown>): Record<string, number> {
    const overrides: Record<string, number> = {};
    const interval = this.options.retryIntervalMs ?? (this.time.kind === 'virtual' ? 0 : 1);
    for (const [stateName, state] of allStates(definition)) {
      if (Array.isArray(state.Retry)) overrides[stateName] = interval;
    }
    return overrides;
  }

  /** Waits for every execution started so far (and those they start) to end. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}

function* allStates(definition: Record<string, unknown>): Generator<[string, StateDefinition]> {
  const states = (definition.States ?? {}) as Record<string, StateDefinition>;
  for (const [name, state] of Object.entries(states)) {
    yield [name, state];
    const processor = (state.ItemProcessor ?? state.Iterator) as Record<string, unknown> | undefined;
    if (processor) yield* allStates(processor);
    for (const branch of (state.Branches as Record<string, unknown>[] | undefined) ?? []) yield* allStates(branch);
  }
}

/** The callback pattern's resource suffix: the task waits for SendTaskSuccess / SendTaskFailure with its token. */
const CALLBACK_SUFFIX = '.waitForTaskToken';
/** Stands for `$$.Task.Token` in a callback task's Parameters until the task runs and its token exists. */
const TOKEN_PLACEHOLDER = '@@rollout-local-task-token@@';

/**
 * Prepares a callback task in place: every `"<key>.$": "$$.Task.Token"` of its Parameters becomes
 * the placeholder the handler fills with the task's token, and its TimeoutSeconds/HeartbeatSeconds
 * move to the engine's clock (returned), since the engine's own task timeout is wall-clock time.
 */
function runCallbackWithToken(machine: string, stateName: string, state: StateDefinition): TaskTimers {
  const replace = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(replace);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, v]) =>
        key.endsWith('.$') && v === '$$.Task.Token' ? [key.slice(0, -2), TOKEN_PLACEHOLDER] : [key, replace(v)],
      ),
    );
  };
  const parameters = replace(state.Parameters ?? { 'Payload.$': '$' }) as Record<string, unknown>;
  // TimeoutSecondsPath and HeartbeatSecondsPath are read from the state's input, as Parameters are: carried through
  // them under keys of the engine's own (TIMER_KEYS), then taken out before the function sees its payload.
  for (const [field, key] of Object.entries(TIMER_PATHS)) {
    const reference = state[field];
    if (reference === undefined) continue;
    if (typeof reference !== 'string' || !reference.startsWith('$')) throw new Error(`${machine}: state '${stateName}': ${field} must be a reference path`);
    parameters[`${key}.$`] = reference;
    delete state[field];
  }
  state.Parameters = parameters;
  const timers: TaskTimers = {
    ...(typeof state.TimeoutSeconds === 'number' ? { timeoutSeconds: state.TimeoutSeconds } : {}),
    ...(typeof state.HeartbeatSeconds === 'number' ? { heartbeatSeconds: state.HeartbeatSeconds } : {}),
  };
  delete state.HeartbeatSeconds;
  state.TimeoutSeconds = WAIT_TIMEOUT_SECONDS;
  return timers;
}

/** Where a callback task's TimeoutSecondsPath and HeartbeatSecondsPath travel in its evaluated Parameters. */
const TIMER_PATHS = { TimeoutSecondsPath: '@@rollout-local-timeout-seconds@@', HeartbeatSecondsPath: '@@rollout-local-heartbeat-seconds@@' } as const;

/**
 * The task's timers for this run: its TimeoutSeconds/HeartbeatSeconds, or the values its paths gave (taken out of
 * the evaluated Parameters). As Step Functions, a path whose value is not a positive whole number fails the task
 * with States.Runtime.
 */
function timersOf(stateName: string, fixed: TaskTimers, input: Record<string, unknown>): { timers: TaskTimers; input: Record<string, unknown> } {
  const { [TIMER_PATHS.TimeoutSecondsPath]: timeout, [TIMER_PATHS.HeartbeatSecondsPath]: heartbeat, ...rest } = input;
  const seconds = (value: unknown, field: string): number => {
    if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
      throw namedError(
        'States.Runtime',
        `An error occurred while executing the state '${stateName}'. The ${field} ${JSON.stringify(value)} is not a positive integer`,
      );
    }
    return value;
  };
  return {
    timers: {
      ...fixed,
      ...(timeout !== undefined ? { timeoutSeconds: seconds(timeout, 'TimeoutSecondsPath') } : {}),
      ...(heartbeat !== undefined ? { heartbeatSeconds: seconds(heartbeat, 'HeartbeatSecondsPath') } : {}),
    },
    input: rest,
  };
}

/** The task's evaluated Parameters with its token in place of the placeholder. */
function withToken(value: unknown, token: string): unknown {
  if (value === TOKEN_PLACEHOLDER) return token;
  if (Array.isArray(value)) return value.map((v) => withToken(v, token));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, v]) => [key, withToken(v, token)]));
}

/** Rewrites a Wait state in place into a Task the local Wait handler runs (InputPath, OutputPath, Next and End stay). */
function runWaitAsTask(state: StateDefinition): void {
  const { Seconds, SecondsPath, Timestamp, TimestampPath } = state;
  const parameters: Record<string, unknown> = { 'input.$': '$' };
  if (typeof SecondsPath === 'string') parameters['seconds.$'] = SecondsPath;
  else if (typeof TimestampPath === 'string') parameters['timestamp.$'] = TimestampPath;
  else if (typeof Timestamp === 'string') parameters.timestamp = Timestamp;
  else parameters.seconds = Seconds;
  for (const key of ['Seconds', 'SecondsPath', 'Timestamp', 'TimestampPath']) delete state[key];
  Object.assign(state, { Type: 'Task', Resource: WAIT_RESOURCE, Parameters: parameters, TimeoutSeconds: WAIT_TIMEOUT_SECONDS });
}

/** The AWS history event of an engine event, for the kinds GetExecutionHistory reports here; undefined for the others. */
function historyEntryOf(event: EngineEvent, timestamp: number): HistoryEntry | undefined {
  const stateName = event.state?.name;
  const stateType = event.state?.type;
  switch (event.type) {
    case 'ExecutionStarted':
    case 'ExecutionSucceeded':
    case 'ExecutionFailed':
    case 'ExecutionAborted':
    case 'ExecutionTimeout':
      return { type: event.type === 'ExecutionTimeout' ? 'ExecutionTimedOut' : event.type, timestamp, ...errorOf(event) };
    case 'StateEntered':
      return { type: `${stateType}StateEntered`, timestamp, ...(stateName ? { stateName } : {}) };
    case 'StateExited':
      return { type: `${stateType}StateExited`, timestamp, ...(stateName ? { stateName } : {}) };
    case 'MapIterationStarted':
    case 'MapIterationSucceeded':
    case 'MapIterationFailed':
      return { type: event.type, timestamp, ...(stateName ? { stateName } : {}) };
    default:
      return undefined;
  }
}

function errorOf(event: EngineEvent): { error?: string; cause?: string } {
  const { Error: error, Cause: cause } = event as { Error?: unknown; Cause?: unknown };
  return { ...(typeof error === 'string' ? { error } : {}), ...(typeof cause === 'string' ? { cause } : {}) };
}

function byteSize(value: unknown): number {
  return value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value));
}

/**
 * A stopped execution starts no task: aws-local-stepfunctions still runs the first state of Map
 * iterations that were queued behind MaxConcurrency when the execution was aborted.
 */
function throwIfStopped(stopped: AbortSignal): void {
  if (stopped.aborted) throw new ExecutionAbortedError();
}
