import './polyfills';
import { readFileSync } from 'node:fs';
import { ExecutionAbortedError, StateMachine } from 'aws-local-stepfunctions';
import { placeholderValues, resolvePlaceholders } from '../contracts';
import { historyEventsOf, type EngineEvent } from './history-events';

/** A function the local engine runs in place of a Lambda: takes the payload, returns the result. */
export type LocalFunction = (payload: unknown) => Promise<unknown>;

const ACCOUNT = '000000000000';
const REGION = 'local';
export const localFunctionArn = (name: string) => `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`;
export const localStateMachineArn = (name: string) => `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:${name}`;
const executionArn = (machine: string, name: string) => `arn:aws:states:${REGION}:${ACCOUNT}:execution:${machine}:${name}`;

/** Figures of one execution, in AWS terms. */
export interface ExecutionFigures {
  executionArn: string;
  historyEvents: number;
  stateTransitions: number;
  lambdaInvocations: number;
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
  /** Real milliseconds a Wait state with a fixed `Seconds` takes (simulated time runs faster). */
  waitMs: (definedSeconds: number) => number;
  /**
   * Real milliseconds to hold a function's result before the workflow sees it. Wait states whose
   * duration comes from the data (`SecondsPath`) run at once; the function that computed the
   * duration holds its result that long instead, which puts the same time between two polls.
   */
  holdResultMs?: (result: unknown) => number;
  /** Real milliseconds before a Retry attempt (default 1). */
  retryIntervalMs?: number;
}

interface Registered {
  name: string;
  arn: string;
  definition: Record<string, unknown>;
  machine: StateMachine;
}

type StateDefinition = Record<string, unknown> & { Type: string };

/**
 * The embedded Step Functions: runs the workflow files as they are deployed (the `${...}` ARNs
 * substituted as CDK does), with Lambda functions run in-process behind the `lambda:invoke`
 * contract (`{Payload}` in and out, errors as `{Error, Cause}` with the Lambda error JSON),
 * `states:startExecution` (continue-as-new) and `startExecution.sync:2` (child workflows).
 */
export class LocalStepFunctions {
  private readonly machines = new Map<string, Registered>();
  private readonly running = new Set<Promise<ExecutionOutcome>>();
  private readonly continuations = new Map<string, Promise<ExecutionOutcome>>();
  readonly executions: ExecutionFigures[] = [];
  private counter = 0;

  constructor(private readonly options: LocalStepFunctionsOptions) {}

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
    const machine = new StateMachine(JSON.parse(text) as never, { validationOptions: { checkArn: true, checkPaths: true } });
    const arn = localStateMachineArn(name);
    this.machines.set(arn, { name, arn, definition, machine });
    return arn;
  }

  /** Starts an execution and returns its outcome once it ends (not following continue-as-new). */
  start(stateMachineArn: string, input: unknown, name = `exec-${++this.counter}`): { executionArn: string; outcome: Promise<ExecutionOutcome> } {
    const registered = this.machines.get(stateMachineArn);
    if (!registered) throw new Error(`no local state machine ${stateMachineArn}`);
    const arn = executionArn(registered.name, name);
    const outcome = this.run(registered, arn, name, input);
    this.running.add(outcome);
    void outcome.finally(() => this.running.delete(outcome));
    return { executionArn: arn, outcome };
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
    const figures: ExecutionFigures = { executionArn: arn, historyEvents: 0, stateTransitions: 0, lambdaInvocations: 0, largestPayloadBytes: 0 };
    this.executions.push(figures);
    const execution = registered.machine.run(input as never, {
      overrides: {
        taskResourceLocalHandlers: this.taskHandlers(registered, arn, figures),
        waitTimeOverrides: this.waitOverrides(registered.definition),
        retryIntervalOverrides: this.retryOverrides(registered.definition),
      },
      context: {
        Execution: { Id: arn, Name: name, Input: input as never, StartTime: new Date().toISOString() },
        StateMachine: { Id: registered.arn, Name: registered.name },
      } as never,
    });
    const counting = this.countEvents(execution.eventLogs as AsyncIterable<EngineEvent>, figures);
    try {
      const output = await execution.result;
      await counting;
      return { executionArn: arn, status: 'SUCCEEDED', output, figures };
    } catch (err) {
      await counting.catch(() => undefined);
      if (err instanceof ExecutionAbortedError) return { executionArn: arn, status: 'ABORTED', figures };
      // ExecutionError wraps what ended the run: a Fail state's error (name = Error, message = Cause) or a runtime error.
      const inner = (err instanceof Error && err.cause instanceof Error ? err.cause : err) as Error;
      return { executionArn: arn, status: 'FAILED', error: inner.name, cause: inner.message, figures };
    }
  }

  private async countEvents(events: AsyncIterable<EngineEvent>, figures: ExecutionFigures): Promise<void> {
    for await (const event of events) {
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

  private taskHandlers(registered: Registered, parentArn: string, figures: ExecutionFigures) {
    const handlers: Record<string, (input: unknown) => Promise<unknown>> = {};
    for (const [stateName, state] of allStates(registered.definition)) {
      if (state.Type !== 'Task') continue;
      const resource = String(state.Resource);
      if (resource === 'arn:aws:states:::lambda:invoke') {
        handlers[stateName] = async (input) => {
          const { FunctionName, Payload } = input as { FunctionName: string; Payload: unknown };
          figures.lambdaInvocations++;
          return { StatusCode: 200, ExecutedVersion: '$LATEST', Payload: await this.invoke(FunctionName, Payload) };
        };
      } else if (resource.startsWith('arn:aws:lambda:')) {
        handlers[stateName] = async (input) => {
          figures.lambdaInvocations++;
          return this.invoke(resource, input);
        };
      } else if (resource === 'arn:aws:states:::states:startExecution') {
        handlers[stateName] = async (input) => {
          const { StateMachineArn, Input, Name } = input as { StateMachineArn: string; Input: unknown; Name?: string };
          const child = this.start(StateMachineArn, Input, Name);
          this.continuations.set(parentArn, child.outcome);
          return { ExecutionArn: child.executionArn, StartDate: new Date().toISOString() };
        };
      } else if (resource === 'arn:aws:states:::states:startExecution.sync:2') {
        handlers[stateName] = async (input) => {
          const { StateMachineArn, Input, Name } = input as { StateMachineArn: string; Input: unknown; Name?: string };
          const outcome = await this.runToEnd(StateMachineArn, Input, Name);
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

  private async invoke(functionArn: string, payload: unknown): Promise<unknown> {
    const name = functionArn.slice(functionArn.lastIndexOf(':') + 1);
    const fn = this.options.functions[name];
    if (!fn) throw namedError('Lambda.ResourceNotFoundException', `Function not found: ${functionArn}`);
    try {
      // A JSON round trip, as over the wire: handlers never share objects with the engine.
      const result = JSON.parse(JSON.stringify((await fn(JSON.parse(JSON.stringify(payload)))) ?? null)) as unknown;
      const hold = this.options.holdResultMs?.(result) ?? 0;
      if (hold > 0) await new Promise((resolve) => setTimeout(resolve, hold));
      return result;
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      // As Lambda reports a function error: Error is the error's name, Cause the error JSON.
      throw namedError(e.name, JSON.stringify({ errorType: e.name, errorMessage: e.message }));
    }
  }

  private waitOverrides(definition: Record<string, unknown>): Record<string, number> {
    const overrides: Record<string, number> = {};
    for (const [stateName, state] of allStates(definition)) {
      if (state.Type === 'Wait') overrides[stateName] = typeof state.Seconds === 'number' ? this.options.waitMs(state.Seconds) : 0;
    }
    return overrides;
  }

  private retryOverrides(definition: Record<string, unknown>): Record<string, number> {
    const overrides: Record<string, number> = {};
    for (const [stateName, state] of allStates(definition)) {
      if (Array.isArray(state.Retry)) overrides[stateName] = this.options.retryIntervalMs ?? 1;
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

function namedError(name: string, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

function byteSize(value: unknown): number {
  return value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value));
}
