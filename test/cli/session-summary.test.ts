import { renderSessionSummary } from '../../cli/summary';
import type { NodeReport, SessionReport } from '../../control-plane/reports/session-report';

/** The summary's failed nodes: one a line with their reason, but the many of one reason (a lock-step cancel's) as one hostlist. */

function cancelled(nodes: Record<string, NodeReport>): SessionReport {
  const failed = Object.values(nodes).filter((n) => n.status === 'FAILED').length;
  return {
    upgradeId: 'u-1',
    kind: 'ComputeUpgradeSession',
    state: 'DELETED',
    completed: false,
    startingLabel: 'compute',
    failedLabel: 'failed',
    upgradeStepSize: 4,
    upgradeTemplateId: 'img-2',
    createdAt: '2026-01-01T00:00:00.000Z',
    stepCount: 16,
    controls: { mode: 'lockstep' },
    progress: { step: 1, stage: 'COMPLETE' },
    counts: { UPGRADED: Object.keys(nodes).length - failed, FAILED: failed, NOT_STARTED: 0, IN_PROGRESS: 0 },
    phases: {},
    timeBase: 'simulated',
    messages: [],
    messageLog: [],
    nodes,
  } as unknown as SessionReport;
}

describe('renderSessionSummary: failed nodes', () => {
  it('a cancelled lock-step session lists its 60 nodes failed by the deletion rules as one hostlist with their count', () => {
    const nodes: Record<string, NodeReport> = {};
    for (let rack = 0; rack < 2; rack++)
      for (let slot = 1; slot <= 16; slot++)
        for (let n = 0; n < 2; n++) {
          const name = `x300${rack}c0s${slot}b0n${n}`;
          const index = Object.keys(nodes).length;
          nodes[name] =
            index < 3
              ? { status: 'UPGRADED', phase: 'back' }
              : index === 3
                ? { status: 'FAILED', phase: 'failed', reason: 'upgrading-boot-session-failed', wlmName: 'nid000004' }
                : { status: 'FAILED', phase: 'failed', reason: 'upgrade-session-deleted-before-completion' };
        }
    const text = renderSessionSummary(cancelled(nodes));
    const failedSection = text.slice(text.indexOf('Failed nodes:')).split('\n').slice(1);
    expect(failedSection).toEqual([
      expect.stringMatching(/^ {4}x3000c0s2b0n1 \(nid000004\) +upgrading-boot-session-failed$/),
      expect.stringMatching(/^ {4}x3000c0s\[3-16\]b0n\[0-1\],x3001c0s\[1-16\]b0n\[0-1\] \(60\) +upgrade-session-deleted-before-completion$/),
    ]);
  });

  it('a few nodes of one reason stay one a line', () => {
    const nodes: Record<string, NodeReport> = {
      n1: { status: 'FAILED', phase: 'failed', reason: 'upgrading-boot-session-failed' },
      n2: { status: 'FAILED', phase: 'failed', reason: 'upgrading-boot-session-failed' },
      n3: { status: 'UPGRADED', phase: 'back' },
    };
    const lines = renderSessionSummary(cancelled(nodes)).split('\n');
    expect(lines).toContain('    n1  upgrading-boot-session-failed');
    expect(lines).toContain('    n2  upgrading-boot-session-failed');
  });
});
