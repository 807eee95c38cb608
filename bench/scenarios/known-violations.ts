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

export const KNOWN_VIOLATIONS: readonly KnownViolation[] = [
  {
    // Found by the site-events scenarios (issue 29), e.g. seed 26031; the fix belongs to the rolling-upgrade activities.
    item: 'site-wait-after-cancel',
    what: "site triggers armed: a session cancelled or stopped (DELETING, STOPPING) while nodes are in flight loops without waiting: parkForSiteEvent parks only an UPDATING session, so each `Wait For Site Event` is refused (SiteEventArrived) and the workflow looks at the site again at once, until its nodes' waits end",
    matches: (facts, v) => facts.siteEvents === true && v.invariant === 'no-progress' && v.text.includes('with the clock standing still'),
  },
  {
    // Found by the site-events scenarios (issue 29), e.g. seed 26154; the fix belongs to the window's wait (core/rolling-upgrade).
    item: 'site-wait-over-health-check',
    what: "site triggers armed: a node whose health check starts (seen in the window) is waited for by the site's events (a health check's result is no Slurm event) until the return timeout, then its check is judged to have given no result within its timeout: FAILED upgrading-health-check-failed though its check passes",
    matches: (facts, v) => facts.siteEvents === true && v.invariant === 'failure-is-the-sites' && v.text.includes('health-check-failed'),
  },
  {
    // Found by the site-events scenarios (issue 29), e.g. seed 100094; the fix belongs to the activities' armTriggers (or StriggerTriggers.arm).
    item: 'site-triggers-half-set',
    what: "site triggers armed over SSM: a strigger --set that fails after others succeeded (a 503) leaves the session polling ('Site triggers could not be set'), and the triggers already set are never cleared: releaseTriggersAtEnd disarms only a session recorded armed",
    matches: (facts, v) => facts.siteEvents === true && v.invariant === 'site-triggers-cleared' && v.text.includes('Site triggers could not be set'),
  },
];

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
