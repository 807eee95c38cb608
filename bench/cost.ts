import type { BenchFigures } from './figures';
import { SITE_ROUND_TRIP_MS } from './site-round-trips';

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

export interface CostPerThousand {
  stepFunctions: number;
  lambda: number;
  dynamoDb: number;
  total: number;
  /** Write and read request units (DynamoDB on-demand). */
  writes: number;
  reads: number;
  /** Billed Lambda milliseconds: measured in this process, plus the modelled site round trips. */
  billedMs: number;
}

/**
 * Dollars per 1,000 node-upgrades from a run's counted transitions, invocations and DynamoDB request units:
 * the units DynamoDB bills (every item a batch or transaction writes or reads, an item over 1 KB written or 4 KB
 * read for more than one; RequestCounter in local/local-dynamodb.ts). Lambda's billed time is each invocation's
 * measured duration plus SITE_ROUND_TRIP_MS for each site round trip it waited on (bench/site-round-trips.ts).
 */
export function costPerThousandNodes(f: BenchFigures): CostPerThousand {
  if (!f.dynamoDbUnits || f.siteRoundTrips === undefined) throw new Error(`${f.scenario}: the cost needs the request units and the site round trips counted`);
  const { write: writes, read: reads } = f.dynamoDbUnits;
  const scale = 1000 / f.nodes;
  // Measured: each invocation's in-process duration, rounded up to the millisecond as Lambda bills; modelled: the site's latency.
  const billedMs = f.lambdaBilledMs + f.siteRoundTrips * SITE_ROUND_TRIP_MS;
  const gbSeconds = (LAMBDA_MEMORY_MB / 1024) * (billedMs / 1000);
  const stepFunctions = f.stateTransitions * PRICES.stepFunctionsPerTransition * scale;
  const lambda = (f.lambdaInvocations * PRICES.lambdaPerRequest + gbSeconds * PRICES.lambdaPerGbSecondArm) * scale;
  const dynamoDb = (writes * PRICES.dynamoDbPerWrite + reads * PRICES.dynamoDbPerRead) * scale;
  return { stepFunctions, lambda, dynamoDb, total: stepFunctions + lambda + dynamoDb, writes, reads, billedMs };
}
