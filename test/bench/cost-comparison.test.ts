import { costRow, formatMakespan, goalVerdict, renderCostBreakdown, renderCostComparison, type CostMode } from '../../bench/cost-comparison';
import { costPerThousandNodes } from '../../bench/cost';
import { transitionsByState, type BenchFigures } from '../../bench/figures';

const figures = (over: Partial<BenchFigures> = {}): BenchFigures => ({
  scenario: 'test',
  outcome: 'SUCCEEDED, session READY, 100 upgraded / 0 failed',
  nodes: 100,
  wallSeconds: 1,
  makespanSeconds: 3725,
  executions: 1,
  maxHistoryEvents: 0,
  largestPayloadBytes: 0,
  largestPayloadState: '-',
  stateTransitions: 3100,
  lambdaInvocations: 900,
  lambdaBilledMs: 9000,
  dynamoDbRequests: 10,
  dynamoDbUnits: { write: 2000, read: 400 },
  siteRoundTrips: 1700,
  ...over,
});

const mode: CostMode = { label: 'lock-step, step 1', stepSize: 1, goal: 0.2 };

describe('the cost comparison (before: every wait a poll; after: the site events)', () => {
  it('a goal is met at or under it, with the ratio of the cost to it', () => {
    expect(goalVerdict(0.1, 0.2)).toEqual({ met: true, ratio: 0.5 });
    expect(goalVerdict(0.2, 0.2)).toEqual({ met: true, ratio: 1 });
    expect(goalVerdict(0.05, 0.02)).toEqual({ met: false, ratio: 2.5 });
  });

  it('a row is per node (write units, not requests), priced as costPerThousandNodes prices the run', () => {
    const f = figures();
    const row = costRow(f);
    expect(row).toMatchObject({ transitions: 31, writes: 20, invocations: 9, roundTrips: 17, makespanSeconds: 3725 });
    expect(row.cost.total).toBe(costPerThousandNodes(f).total);
    expect(() => costRow(figures({ siteRoundTrips: undefined }))).toThrow(/round trips/);
  });

  it('a makespan reads h:mm:ss', () => {
    expect(formatMakespan(3725)).toBe('1:02:05');
    expect(formatMakespan(14_400)).toBe('4:00:00');
    expect(formatMakespan(undefined)).toBe('-');
  });

  it("the table gives before → after per mode and the after figure's verdict against the mode's goal", () => {
    const before = figures();
    const after = figures({ stateTransitions: 600, lambdaInvocations: 300, siteRoundTrips: 300, lambdaBilledMs: 3000, makespanSeconds: 3600 });
    const table = renderCostComparison('title', [{ mode, before, after }]);
    const total = costPerThousandNodes(after).total;
    const verdict = goalVerdict(total, 0.2);
    expect(table.split('\n')[0]).toBe('title');
    const row = table.split('\n').find((line) => line.startsWith('| lock-step, step 1 |'))!;
    expect(row).toContain('| 31.00 → 6.00 | 20.00 → 20.00 | 9.00 → 3.00 | 17.00 → 3.00 |');
    expect(row).toContain(`**$${total.toFixed(4)}**`);
    expect(row).toContain('| 1:02:05 → 1:00:00 |');
    expect(row).toContain(`$0.20: ${verdict.met ? 'met' : 'missed'}, ${verdict.ratio.toFixed(2)} x |`);
  });

  it('the breakdown names the states and functions that take the most, per node', () => {
    const after = figures({
      transitionsByState: { 'Check Progress': 900, 'Dispatch Stage': 800, 'Wait For Site Event': 200 },
      invocationsByFunction: { CheckBoot: { invocations: 200, roundTrips: 200 }, BootStep: { invocations: 100, roundTrips: 500 } },
    });
    const text = renderCostBreakdown([{ mode, before: figures(), after }]);
    expect(text).toContain('transitions / node: Check Progress 9.00, Dispatch Stage 8.00, Wait For Site Event 2.00');
    expect(text).toContain('invocations / node: CheckBoot 2.00, BootStep 1.00; site round trips / node: BootStep 5.00, CheckBoot 2.00');
  });

  it("transitions per state: each StateEntered of every execution's history, by state name", () => {
    const history = (names: string[]) => names.map((stateName) => ({ type: 'TaskStateEntered', timestamp: 0, stateName }));
    const engine = {
      stateMachines: () => [{ name: 'a', arn: 'arn:a', definition: '{}', createdAt: 0 }],
      listExecutions: () => [
        { history: [...history(['Open Session', 'Check Progress']), { type: 'TaskStateExited', timestamp: 0, stateName: 'Open Session' }] },
        { history: history(['Check Progress']) },
      ],
    } as unknown as Parameters<typeof transitionsByState>[0];
    expect(transitionsByState(engine)).toEqual({ 'Open Session': 1, 'Check Progress': 2 });
  });
});
