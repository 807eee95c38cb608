import { sayWhyWaiting } from '../../../core/rolling-upgrade/window-decisions';
import type { WindowProgress } from '../../../core/rolling-upgrade/session';
import { session } from '../../support/upgrade-sessions';

/** Issue 26, item 5: a run held back by a gate says why at every poll, never more often, and at once when the reason changes. */
describe('sayWhyWaiting', () => {
  const window = (waiting?: string, waitSaidAt?: number): WindowProgress => ({
    wave: 0,
    approvedWaves: [],
    paused: false,
    bootCount: 0,
    ...(waiting ? { waiting } : {}),
    ...(waitSaidAt !== undefined ? { waitSaidAt } : {}),
  });
  const s = session({ upgradeId: 'u1', pollIntervalSeconds: 30 });
  const closed = { kind: 'maintenance-window' as const, until: 3_600_000 };

  it('says it when the wait starts, then once a poll interval has passed, not sooner', () => {
    const first = sayWhyWaiting({ session: s, before: window(), after: window('maintenance-window'), wait: closed, now: 0 });
    expect(first).toEqual({
      window: window('maintenance-window', 0),
      message: 'Window waiting: no maintenance window is open; the next opens in 1 h: no node starts until then',
    });
    const sooner = sayWhyWaiting({ session: s, before: first.window, after: window('maintenance-window'), wait: closed, now: 10_000 });
    expect(sooner).toEqual({ window: window('maintenance-window', 0) });
    const poll = sayWhyWaiting({ session: s, before: sooner.window, after: window('maintenance-window'), wait: closed, now: 30_000 });
    expect(poll.message).toBe('Window waiting: no maintenance window is open; the next opens in 1 h: no node starts until then');
    expect(poll.window.waitSaidAt).toBe(30_000);
  });

  it('says it at once when the reason changes, and forgets it once nothing waits', () => {
    const approval = sayWhyWaiting({
      session: s,
      before: window('bake', 0),
      after: window('approval of batch 2'),
      wait: { kind: 'approval', wave: 1 },
      now: 5_000,
    });
    expect(approval.message).toBe('Window waiting: batch 2 waits for its approval: rollout session approve u1');
    expect(sayWhyWaiting({ session: s, before: approval.window, after: window(), wait: undefined, now: 6_000 })).toEqual({ window: window() });
  });

  it('says nothing while the run stops or is cancelled (those say what they do)', () => {
    const stopping = session({ state: 'STOPPING', pollIntervalSeconds: 30 });
    expect(sayWhyWaiting({ session: stopping, before: window(), after: window('paused'), wait: { kind: 'paused' }, now: 0 }).message).toBeUndefined();
  });
});
