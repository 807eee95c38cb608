import { neverOpeningWindow, type Violation } from './invariants';
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
  /** The site's triggers armed (simulated scenarios only). */
  siteEvents?: boolean;
}

/**
 * None now. The site-events scenarios (issue 29) found three, fixed in the rolling-upgrade activities and now
 * regressions of test/scenarios/scenario-regressions.test.ts: a session stopped or cancelled while parked for the site
 * looped without waiting (seeds 26031, 100110: it parks while STOPPING or DELETING too, and a request counts as an
 * event); a node whose health check ran was failed for a check without result (26154); triggers set before one failed
 * were never cleared (100094: cleared at once, and at the end whether they were all set or not).
 */
export const KNOWN_VIOLATIONS: readonly KnownViolation[] = [];

/**
 * Findings of the task-graph scenarios not fixed yet: none now. (A task run stopped while its only task
 * in flight then failed ended FAILED, not STOPPED, with nodes it never started left: seed 26177, fixed in
 * core/task-graph/task-run-pass.ts concludeTaskRunPass, a regression of test/scenarios/scenario-regressions.test.ts.)
 */
export const TASK_GRAPH_KNOWN: readonly { item: string; what: string; matches(violation: Violation): boolean }[] = [];

export function factsOf(scenario: Scenario): ScenarioFacts {
  const adminReasons: Record<string, string> = {};
  for (const node of scenario.nodes) if (node.adminDrain !== undefined) adminReasons[node.name] = node.adminDrain;
  for (const action of scenario.operator) if (action.kind === 'admin-drain') adminReasons[action.node!] = action.reason!;
  return {
    bootService: scenario.connectors === 'ssm' ? 'slurm-reboot' : 'bos',
    mode: String(scenario.request.mode),
    adminReasons,
    neverOpeningWindow: neverOpeningWindow(scenario),
    gates: scenario.request.maintenanceWindows !== undefined || scenario.request.bakeSeconds !== undefined,
    siteEvents: scenario.siteEvents !== undefined,
  };
}

/** The known item a violation belongs to, if any. */
export function knownItem(facts: ScenarioFacts, violation: Violation): number | string | undefined {
  return KNOWN_VIOLATIONS.find((known) => known.matches(facts, violation))?.item;
}
