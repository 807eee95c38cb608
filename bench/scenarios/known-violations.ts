import type { Violation } from './invariants';
import type { Scenario } from './scenario';

/**
 * Violations of bugs already filed (issue 26, "Why", items 1 to 7) and being fixed elsewhere: a
 * scenario that hits one reports it as known, under its item, instead of failing. Each entry goes
 * once its fix is merged; the list is meant to end empty.
 */
export interface KnownViolation {
  item: number;
  what: string;
  matches(scenario: Scenario, violation: Violation): boolean;
}

export const KNOWN_VIOLATIONS: readonly KnownViolation[] = [
  {
    item: 1,
    what: "a window's boot session of one node through slurm-reboot: the limit taken for a label, every node FAILED unrebooted",
    matches: (scenario, v) =>
      scenario.connectors === 'ssm' && scenario.request.mode === 'window' && v.invariant === 'failure-is-the-sites' && v.text.includes('booted 0'),
  },
  {
    item: 7,
    what: 'a node returned to service keeps the reason that names the session (Slurm keeps it on resume); here a busy node whose drain a stop or cancel lifted',
    matches: (_scenario, v) =>
      (v.invariant === 'not-started-untouched' &&
        v.text.includes("still carries this session's mark") &&
        /shows (ALLOCATED|MIXED|IDLE|COMPLETING)/.test(v.text)) ||
      (v.invariant === 'site-left-clean' && v.text.startsWith('still claimed by the ended session')),
  },
  {
    item: 4,
    what: "an admin's drain whose reason begins with `rolling-upgrade` and names no run is lifted",
    matches: (scenario, v) =>
      v.invariant === 'admin-drain-kept' && v.node !== undefined && /^rolling-upgrade(\s|$|')/.test(adminReasonOf(scenario, v.node) ?? ''),
  },
  {
    item: 5,
    what: 'a maintenance window that never opens hangs the run with no message',
    matches: (scenario, v) =>
      (v.invariant === 'no-progress' && JSON.stringify(scenario.request.maintenanceWindows ?? []).includes('0 0 30 2 *')) ||
      // The fix: "a run waiting on any gate posts why at least once per poll" (a maintenance window, a bake).
      (v.invariant === 'says-why-it-waits' && (scenario.request.maintenanceWindows !== undefined || scenario.request.bakeSeconds !== undefined)),
  },
];

function adminReasonOf(scenario: Scenario, node: string): string | undefined {
  const initial = scenario.nodes.find((n) => n.name === node)?.adminDrain;
  return initial ?? scenario.operator.find((a) => a.kind === 'admin-drain' && a.node === node)?.reason;
}

/** The known item a violation belongs to, if any. */
export function knownItem(scenario: Scenario, violation: Violation): number | undefined {
  return KNOWN_VIOLATIONS.find((known) => known.matches(scenario, violation))?.item;
}
