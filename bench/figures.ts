import type { ExecutionFigures, LocalStepFunctions } from '../local/local-step-functions';

export interface BenchFigures {
  scenario: string;
  outcome: string;
  nodes: number;
  wallSeconds: number;
  /** The run's simulated duration, start to end (virtual time: the same on any host). */
  makespanSeconds?: number;
  executions: number;
  maxHistoryEvents: number;
  largestPayloadBytes: number;
  largestPayloadState: string;
  stateTransitions: number;
  lambdaInvocations: number;
  /** Billed milliseconds of those invocations, measured in-process (local/local-step-functions.ts). */
  lambdaBilledMs: number;
  dynamoDbRequests: number;
  /** e.g. { PutItemCommand: 12, QueryCommand: 3 }: what the cost figures split into writes and reads. */
  dynamoDbRequestsByCommand?: Record<string, number>;
  /** Request units those requests consumed, as on-demand DynamoDB bills them (RequestCounter in local/local-dynamodb.ts). */
  dynamoDbUnits?: { write: number; read: number };
  /** Site round trips the invocations waited on (bench/site-round-trips.ts): billed at a modelled latency each. */
  siteRoundTrips?: number;
  /** State transitions per state name, over every execution: where the transitions go. */
  transitionsByState?: Record<string, number>;
  /** Invocations and the site round trips they waited on, per function: where the Lambda's share goes. */
  invocationsByFunction?: Record<string, { invocations: number; roundTrips: number }>;
}

/** State transitions per state name (each StateEntered of every execution's history), over all the engine ran. */
export function transitionsByState(engine: Pick<LocalStepFunctions, 'stateMachines' | 'listExecutions'>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const machine of engine.stateMachines())
    for (const execution of engine.listExecutions(machine.arn))
      for (const entry of execution.history)
        if (entry.type.endsWith('StateEntered') && entry.stateName !== undefined) counts[entry.stateName] = (counts[entry.stateName] ?? 0) + 1;
  return counts;
}

export function summarizeExecutions(executions: readonly ExecutionFigures[]) {
  const largest = executions.reduce<ExecutionFigures | undefined>((a, e) => (!a || e.largestPayloadBytes > a.largestPayloadBytes ? e : a), undefined);
  return {
    executions: executions.length,
    maxHistoryEvents: Math.max(0, ...executions.map((e) => e.historyEvents)),
    largestPayloadBytes: largest?.largestPayloadBytes ?? 0,
    largestPayloadState: largest?.largestPayloadState ?? '-',
    stateTransitions: executions.reduce((sum, e) => sum + e.stateTransitions, 0),
    lambdaInvocations: executions.reduce((sum, e) => sum + e.lambdaInvocations, 0),
    lambdaBilledMs: executions.reduce((sum, e) => sum + e.lambdaBilledMs, 0),
  };
}

/** One block of figures per scenario, readable in a terminal and easy to paste into a note. */
export function renderFigures(f: BenchFigures): string {
  const perNode = (n: number) => (n / f.nodes).toFixed(2);
  return [
    `${f.scenario}`,
    `  outcome                          ${f.outcome}`,
    `  wall time                        ${f.wallSeconds.toFixed(1)} s`,
    `  executions started               ${f.executions}`,
    `  most history events, one exec.   ${f.maxHistoryEvents} (quota 25,000)`,
    `  largest state payload            ${f.largestPayloadBytes} bytes (quota 262,144), in '${f.largestPayloadState}'`,
    `  state transitions                ${f.stateTransitions} (${perNode(f.stateTransitions)} per node)`,
    `  Lambda invocations               ${f.lambdaInvocations} (${perNode(f.lambdaInvocations)} per node)`,
    `  DynamoDB requests                ${f.dynamoDbRequests} (${perNode(f.dynamoDbRequests)} per node)`,
  ].join('\n');
}
