import { sayWhyWaiting } from '../../../core/rolling-upgrade/window-decisions';
import type { WindowProgress } from '../../../core/rolling-upgrade/session';
import { session } from '../../support/upgrade-sessions';

/** Issue 26, item 5: a run held back by a gate says why at every poll, never more often, and at once when the gate changes. */
describe('sayWhyWaiting', () => {
  const window = (waitSaid?: WindowProgress['waitSaid']): WindowProgress => ({
    wave: 0,
    approvedWaves: [],
    paused: false,
    bootCount: 0,
    ...(waitSaid ? { waitSaid } : {}),
  });
  const s = session({ pollIntervalSeconds: 30 });
  const closed = (text: string) => ({ about: 'maintenance-window', text });

  it('says it when the wait starts, then once a poll interval has passed, not sooner', () => {
    const first = sayWhyWaiting({ session: s, before: window(), after: window(), wait: closed('no window, opens in 1 h'), now: 0 });
    expect(first).toEqual({ window: window({ at: 0, about: 'maintenance-window' }), message: 'Window waiting: no window, opens in 1 h' });
    const sooner = sayWhyWaiting({ session: s, before: first.window, after: window(), wait: closed('no window, opens in 60 min'), now: 10_000 });
    expect(sooner).toEqual({ window: window({ at: 0, about: 'maintenance-window' }) });
    const poll = sayWhyWaiting({ session: s, before: sooner.window, after: window(), wait: closed('no window, opens in 59 min'), now: 30_000 });
    expect(poll).toEqual({ window: window({ at: 30_000, about: 'maintenance-window' }), message: 'Window waiting: no window, opens in 59 min' });
  });

  it('says it at once when the gate changes, and forgets it once nothing waits', () => {
    const before = window({ at: 0, about: 'bake' });
    const approval = sayWhyWaiting({ session: s, before, after: window(), wait: { about: 'approval of batch 2', text: 'batch 2 waits' }, now: 5_000 });
    expect(approval.message).toBe('Window waiting: batch 2 waits');
    expect(sayWhyWaiting({ session: s, before: approval.window, after: window(), wait: undefined, now: 6_000 })).toEqual({ window: window() });
  });

  it('says nothing while the run stops or is cancelled (those say what they do)', () => {
    for (const state of ['STOPPING', 'DELETING'] as const)
      expect(sayWhyWaiting({ session: session({ state }), before: window(), after: window(), wait: closed('x'), now: 0 }).message).toBeUndefined();
  });
});
