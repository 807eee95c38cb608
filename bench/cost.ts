import type { BenchFigures } from './figures';

/**
 * List prices (us-east-1, November 2026) the cost figures use. Step Functions Standard bills state
 * transitions; Lambda requests and GB-seconds (arm64, as the stack's functions run); DynamoDB
 * on-demand write and read request units.
 */
export const PRICES = {
  region: 'us-east-1',
  stepFunctionsPerTransition: 0.025 / 1000,
  lambdaPerRequest: 0.2 / 1_000_000,
  lambdaPerGbSecondArm: 0.0000133334,
  dynamoDbPerWrite: 1.25 / 1_000_000,
  dynamoDbPerRead: 0.25 / 1_000_000,
} as const;

/** The memory the stack gives each function (infra/constructs/workflow-functions.ts). */
export const LAMBDA_MEMORY_MB = 512;

const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand', 'TransactWriteItemsCommand']);

export interface CostPerThousand {
  stepFunctions: number;
  lambda: number;
  dynamoDb: number;
  total: number;
  writes: number;
  reads: number;
}

/**
 * Dollars per 1,000 node-upgrades from a run's counted transitions, invocations and DynamoDB requests.
 * Each DynamoDB request counts as one request unit (items under 1 KB written, 4 KB read: a Query that reads
 * more costs more), so the DynamoDB figure is a lower bound.
 */
export function costPerThousandNodes(f: BenchFigures): CostPerThousand {
  const byCommand = f.dynamoDbRequestsByCommand ?? {};
  const writes = Object.entries(byCommand).reduce((sum, [command, n]) => sum + (WRITES.has(command) ? n : 0), 0);
  const reads = f.dynamoDbRequests - writes;
  const scale = 1000 / f.nodes;
  // Measured: each invocation's in-process duration, rounded up to the millisecond as Lambda bills.
  const gbSeconds = (LAMBDA_MEMORY_MB / 1024) * (f.lambdaBilledMs / 1000);
  const stepFunctions = f.stateTransitions * PRICES.stepFunctionsPerTransition * scale;
  const lambda = (f.lambdaInvocations * PRICES.lambdaPerRequest + gbSeconds * PRICES.lambdaPerGbSecondArm) * scale;
  const dynamoDb = (writes * PRICES.dynamoDbPerWrite + reads * PRICES.dynamoDbPerRead) * scale;
  return { stepFunctions, lambda, dynamoDb, total: stepFunctions + lambda + dynamoDb, writes, reads };
}

export function renderCost(f: BenchFigures): string {
  const c = costPerThousandNodes(f);
  const perNode = (n: number) => (n / f.nodes).toFixed(2);
  const usd = (n: number) => `$${n.toFixed(4)}`;
  return [
    `${f.scenario}: cost per 1,000 node-upgrades (${PRICES.region} list prices)`,
    `  per node                         ${perNode(f.stateTransitions)} transitions, ${perNode(f.lambdaInvocations)} invocations, ${perNode(c.writes)} writes, ${perNode(c.reads)} reads`,
    `  Step Functions Standard          ${usd(c.stepFunctions)}   ($0.025 per 1,000 transitions)`,
    `  Lambda                           ${usd(c.lambda)}   ($0.20 per 1M requests + $0.0000133334 per arm64 GB-s; ${LAMBDA_MEMORY_MB} MB, ${(f.lambdaBilledMs / Math.max(f.lambdaInvocations, 1)).toFixed(1)} ms measured mean billed duration)`,
    `  DynamoDB on-demand               ${usd(c.dynamoDb)}   ($1.25 per 1M writes, $0.25 per 1M reads; one unit per request)`,
    `  total                            ${usd(c.total)}`,
  ].join('\n');
}
