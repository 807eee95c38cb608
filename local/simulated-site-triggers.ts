import { compressHostlist } from '../core/site/hostlist';
import { parseRelayProgram, relayProgram, type SiteEvent } from '../core/site/site-event';
import type { SiteTriggers } from '../ports/site';
import type { TriggerManagerModel } from '../simulator/models/trigger-manager';

/** The relay command the triggers of a simulated site carry (never run: relaySimulatedTriggers delivers their firings in process). */
export const IN_PROCESS_RELAY = '/usr/local/bin/rollout relay deliver --spool /var/spool/rollout-relay';

/**
 * SiteTriggers straight on a simulated slurmctld's trigger list (as strigger would set and clear them), for a
 * simulated site reached by its HTTP clients (slurmrestd sets no triggers): the workflow tests and the scenarios.
 */
export function simulatedSiteTriggers(model: TriggerManagerModel, backstopSeconds?: number): SiteTriggers & { armCalls: number } {
  const triggers = {
    relay: IN_PROCESS_RELAY,
    armCalls: 0,
    ...(backstopSeconds !== undefined ? { backstopSeconds } : {}),
    async arm(session: string, nodes: readonly string[], kinds: readonly SiteEvent['event'][]) {
      triggers.armCalls++;
      return kinds.map((kind) => {
        const program = relayProgram(IN_PROCESS_RELAY, kind, session);
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
