import { compressHostlist, expandHostlist } from '../../core/site/hostlist';
import { parseRelayProgram, relayProgram, type SiteEvent } from '../../core/site/site-event';
import type { SiteTriggers } from '../../ports/site';
import type { TriggerManagerModel } from '../../simulator/models/trigger-manager';
import type { TimeSource } from '../../time/sim-clock';

/** The relay command a test's triggers carry (never run: firings are delivered in process). */
export const TEST_RELAY = '/usr/local/bin/rollout relay deliver --spool /var/spool/rollout-relay';

/** SiteTriggers straight on a simulated slurmctld's trigger list (as strigger would set and clear them). */
export function modelTriggers(model: TriggerManagerModel, backstopSeconds?: number): SiteTriggers & { armCalls: number } {
  const triggers = {
    relay: TEST_RELAY,
    armCalls: 0,
    ...(backstopSeconds !== undefined ? { backstopSeconds } : {}),
    async arm(session: string, nodes: readonly string[], kinds: readonly SiteEvent['event'][]) {
      triggers.armCalls++;
      return kinds.map((kind) => {
        const program = relayProgram(TEST_RELAY, kind, session);
        const set = model.set({ event: kind, resId: compressHostlist([...nodes]), program, perm: true, user: 'root' }, nodes);
        if (typeof set !== 'string') return set.id;
        return model.list().find((t) => t.program === program)!.id;
      });
    },
    async disarm(session: string) {
      let cleared = 0;
      for (const t of model.list()) if (parseRelayProgram(t.program)?.session === session) cleared += model.clear({ id: t.id });
      return cleared;
    },
  };
  return triggers;
}

/**
 * The firings of a simulated slurmctld as a relay would deliver them: each one that ran, once, at its time (the
 * clock sleeps until each pass, which is run then, as slurmctld runs its passes whether anyone looks or not).
 */
export function firingsAsSiteEvents(model: TriggerManagerModel, clockOf: () => TimeSource, deliver: (event: SiteEvent) => void): () => void {
  let n = 0;
  const stopPasses = model.onPassScheduled((at) => {
    const clock = clockOf();
    void clock.sleep(Math.max(0, at - clock.now()) / 1000).then(() => clock.busy(async () => model.catchUp()));
  });
  const stopFirings = model.onFiring((firing) => {
    if (firing.outcome !== 'ran') return;
    const named = parseRelayProgram(firing.program);
    if (!named) return;
    const at = new Date(firing.at).toISOString();
    deliver({
      id: `${named.event}-${named.session}-${firing.at}-${n++}`,
      event: named.event,
      nodes: expandHostlist(firing.hostlist),
      session: named.session,
      firedAt: at,
      receivedAt: at,
    });
  });
  return () => {
    stopPasses();
    stopFirings();
  };
}
