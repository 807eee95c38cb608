import { compressHostlist } from '../core/site/hostlist';
import { parseRelayProgram, relayProgram, type NodeEventKind } from '../core/site/site-event';
import { SIMULATED_RELAY } from './simulated-trigger-relay';
import type { SiteTriggers } from '../ports/site';
import type { TriggerManagerModel } from '../simulator/models/trigger-manager';

/**
 * SiteTriggers straight on a simulated slurmctld's trigger list (as strigger would set and clear them), for a
 * simulated site reached by its HTTP clients (slurmrestd sets no triggers): the workflow tests and the scenarios.
 */
export function simulatedSiteTriggers(model: TriggerManagerModel, backstopSeconds?: number): SiteTriggers & { armCalls: number } {
  const triggers = {
    relay: SIMULATED_RELAY,
    armCalls: 0,
    ...(backstopSeconds !== undefined ? { backstopSeconds } : {}),
    async arm(session: string, nodes: readonly string[], kinds: readonly NodeEventKind[]) {
      triggers.armCalls++;
      return kinds.map((kind) => {
        const program = relayProgram(SIMULATED_RELAY, kind, session);
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
