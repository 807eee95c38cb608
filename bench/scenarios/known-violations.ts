import type { Violation } from './invariants';
import type { Scenario } from './scenario';

/**
 * Violations of bugs already filed (issue 26, "Why", items 1 to 7) and being fixed elsewhere: a
 * scenario that hits one reports it as known, under its item, instead of failing. Each entry goes
 * once its fix is merged; the list is meant to end empty.
 */
export interface KnownViolation {
  /** The issue 26 item, or the name of a finding of the scenarios documented here and left to a decision. */
  item: number | string;
  what: string;
  matches(facts: ScenarioFacts, violation: Violation): boolean;
}

/** What the known bugs depend on, from a simulated or a real-Slurm scenario. */
export interface ScenarioFacts {
  bootService: 'bos' | 'slurm-reboot';
  mode: string;
  /** Each admin-drained node's reason (before the run or during it). */
  adminReasons: Record<string, string>;
  neverOpeningWindow: boolean;
  /** Maintenance windows or a bake: gates the run waits on with nothing in flight. */
  gates: boolean;
}

export const KNOWN_VIOLATIONS: readonly KnownViolation[] = [
  {
    item: 1,
    what: "a window's boot session of one node through slurm-reboot: the limit taken for a label, nodes FAILED unrebooted",
    matches: (facts, v) =>
      facts.bootService === 'slurm-reboot' && facts.mode === 'window' && v.invariant === 'failure-is-the-sites' && /booted 0|rebooted 0/.test(v.text),
  },
  {
    item: 7,
    what: 'a node returned to service keeps the reason that names the session (Slurm keeps it on resume); here a busy node whose drain a stop or cancel lifted',
    matches: (_facts, v) =>
      (v.invariant === 'not-started-untouched' &&
        v.text.includes("still carries this session's mark") &&
        /shows (ALLOCATED|MIXED|IDLE|COMPLETING)/.test(v.text)) ||
      (v.invariant === 'site-left-clean' && v.text.startsWith('still claimed by the ended session')),
  },
  {
    item: 4,
    what: "an admin's drain whose reason begins with `rolling-upgrade` and names no run is lifted",
    matches: (facts, v) => v.invariant === 'admin-drain-kept' && v.node !== undefined && /^rolling-upgrade(\s|$)/.test(facts.adminReasons[v.node] ?? ''),
  },
  {
    item: 5,
    what: 'a maintenance window that never opens hangs the run with no message; a run waiting on a gate says nothing',
    matches: (facts, v) =>
      (v.invariant === 'no-progress' && facts.neverOpeningWindow) ||
      // The fix: "a run waiting on any gate posts why at least once per poll" (a maintenance window, a bake).
      (v.invariant === 'says-why-it-waits' && facts.gates),
  },
];

export function factsOf(scenario: Scenario): ScenarioFacts {
  const adminReasons: Record<string, string> = {};
  for (const node of scenario.nodes) if (node.adminDrain !== undefined) adminReasons[node.name] = node.adminDrain;
  for (const action of scenario.operator) if (action.kind === 'admin-drain') adminReasons[action.node!] = action.reason!;
  return {
    bootService: scenario.connectors === 'ssm' ? 'slurm-reboot' : 'bos',
    mode: String(scenario.request.mode),
    adminReasons,
    neverOpeningWindow: JSON.stringify(scenario.request.maintenanceWindows ?? []).includes('0 0 30 2 *'),
    gates: scenario.request.maintenanceWindows !== undefined || scenario.request.bakeSeconds !== undefined,
  };
}

/** The known item a violation belongs to, if any. */
export function knownItem(facts: ScenarioFacts, violation: Violation): number | string | undefined {
  return KNOWN_VIOLATIONS.find((known) => known.matches(facts, violation))?.item;
}
