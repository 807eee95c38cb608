import { costPerThousandNodes, PRICES } from '../../bench/cost';
import { SITE_ROUND_TRIP_MS } from '../../bench/site-round-trips';
import type { BenchFigures } from '../../bench/figures';

const figures = (over: Partial<BenchFigures> = {}): BenchFigures => ({
  scenario: 'test',
  outcome: 'SUCCEEDED',
  nodes: 1000,
  wallSeconds: 1,
  executions: 1,
  maxHistoryEvents: 0,
  largestPayloadBytes: 0,
  largestPayloadState: '-',
  stateTransitions: 0,
  lambdaInvocations: 0,
  lambdaBilledMs: 0,
  dynamoDbRequests: 10,
  dynamoDbRequestsByCommand: { BatchWriteItemCommand: 10 },
  dynamoDbUnits: { write: 250, read: 4 },
  siteRoundTrips: 0,
  ...over,
});

describe('costPerThousandNodes', () => {
  it('prices the request units DynamoDB bills, not the requests (ten batches of 25 items: 250 writes)', () => {
    const cost = costPerThousandNodes(figures());
    expect(cost.writes).toBe(250);
    expect(cost.dynamoDb).toBeCloseTo(250 * PRICES.dynamoDbPerWrite + 4 * PRICES.dynamoDbPerRead, 12);
  });

  it('bills the Lambda for the site round trips its invocations waited on, at the modelled latency', () => {
    const cost = costPerThousandNodes(figures({ lambdaInvocations: 2, lambdaBilledMs: 100, siteRoundTrips: 4 }));
    expect(cost.billedMs).toBe(100 + 4 * SITE_ROUND_TRIP_MS);
    expect(cost.lambda).toBeCloseTo(2 * PRICES.lambdaPerRequest + 0.5 * (cost.billedMs / 1000) * PRICES.lambdaPerGbSecondArm, 12);
  });

  it('refuses figures without the units and the round trips counted', () => {
    expect(() => costPerThousandNodes(figures({ dynamoDbUnits: undefined }))).toThrow(/request units/);
  });
});
