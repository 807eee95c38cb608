import type { SessionReport } from '../../control-plane/reports/session-report';
import { sessionReportJson } from '../../control-plane/reports/session-report';
import { renderSessionSummary } from '../../cli/summary';

/** A running lock-step session on simulated time, 1 h 36 min in, its second step of 8 booting. */
function report(timeBase: SessionReport['timeBase']): SessionReport {
  const createdAt = '2026-01-01T00:00:00.000Z';
  return {
    upgradeId: 'u1',
    kind: 'ComputeUpgradeSession',
    state: 'UPDATING',
    completed: false,
    startingLabel: 'compute',
    upgradingLabel: 'upgrading',
    failedLabel: 'failed',
    upgradeStepSize: 8,
    upgradeTemplateId: 'cos-2.4',
    workloadManagerType: 'slurm',
    quiesceTimeoutSeconds: 3600,
    bootTimeoutSeconds: 1800,
    wlmReturnTimeoutSeconds: 600,
    pollIntervalSeconds: 30,
    createdAt,
    ...(timeBase === 'simulated' ? { wallCreatedAt: '2026-11-28T21:00:00.000Z' } : {}),
    stepCount: 8,
    controls: { mode: 'lockstep', order: 'plan', approval: 'none', haltOnOutsideFailures: false, bakeSeconds: 0 },
    progress: { step: 1, stage: 'BOOTING' },
    counts: { UPGRADED: 8, FAILED: 0, NOT_STARTED: 55, IN_PROGRESS: 1 },
    phases: { booting: 1 },
    timeBase,
    estimate: { endsAt: '2026-01-01T03:18:00.000Z', basis: '8 of 64 node(s) done in 5760 s' },
    messages: ['Step 2 of 8: draining 8 node(s)'],
    messageLog: [{ at: '2026-01-01T01:36:00.000Z', text: 'Step 2 of 8: draining 8 node(s)' }],
    nodes: { n9: { status: 'IN_PROGRESS', phase: 'booting', since: '2026-01-01T01:42:00.000Z', outOfService: { from: '2026-01-01T01:36:00.000Z' } } },
  } as SessionReport;
}

describe('a session on simulated time', () => {
  it('reads in the summary as offsets from its start (1h 36m), never dates', () => {
    const text = renderSessionSummary(report('simulated'));
    expect(text).toContain("times: simulated time, shown as the time since the session's start (e.g. +1h 36m); created 2026-11-28 21:00:00Z (wall clock)");
    expect(text).toMatch(/n9 {2}booting since \+1h 42m$/m);
    expect(text).toContain('estimated end: +3h 18m');
    expect(text).toContain('+1h 36m  Step 2 of 8: draining 8 node(s)');
    expect(text).not.toContain('2026-01-01');
  });

  it('reads in JSON as seconds from its start, its step counted from 1', () => {
    const json = sessionReportJson(report('simulated'));
    const sim = (secondsFromStart: number) => ({ secondsFromStart, timeBase: 'simulated' });
    expect(json).toMatchObject({
      createdAt: sim(0),
      progress: { step: 2, stage: 'BOOTING' },
      estimate: { endsAt: sim(11_880) },
      messageLog: [{ at: sim(5760) }],
      nodes: { n9: { since: sim(6120), outOfService: { from: sim(5760) } } },
    });
    expect(JSON.stringify(json)).not.toContain('2026-01-01');
  });

  it('on the wall clock keeps dates: ISO in JSON, to the second in text', () => {
    const wall = report('wall-clock');
    expect(sessionReportJson(wall)).toMatchObject({ createdAt: wall.createdAt, nodes: { n9: { since: '2026-01-01T01:42:00.000Z' } } });
    expect(renderSessionSummary(wall)).toMatch(/n9 {2}booting since 2026-01-01 01:42:00Z$/m);
  });
});
