import { evaluateSuccessCriteria } from '../../core/group-deployment/success-criteria';
import { operatorFacts, type Violation } from './invariants';
import type { DeploymentScenarioRun } from './deployment-scenario';

/**
 * The invariants of a group deployment (bench/scenarios/invariants.ts has the upgrade's), judged
 * against the site's own record: the provisioner's node runs (which prepare and deploy ran on which
 * node, when, and whether it finished) and each node's prepare and deploy counts, with the faults
 * drawn for it; the deployment's report only says what it claims.
 */
const ENDED = ['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'];

export function checkDeploymentInvariants(run: DeploymentScenarioRun): Violation[] {
  const found: Violation[] = [];
  const add = (invariant: Violation['invariant'], text: string, node?: string) => found.push({ invariant, text, ...(node ? { node } : {}) });
  const { scenario, site, report } = run;
  const { processEnded, stop, cancel, resumed } = operatorFacts(run);
  const start = run.startedAt;

  for (const violation of site.violations) add('site-safety', violation);
  if (run.budgetExceeded) add('no-progress', `the run had not ended after ${run.budgetExceeded} (status ${run.status ?? 'none'})`);
  if (!report) {
    add('run-error', 'the workflow created no deployment');
    return found;
  }

  // Each node at the site: which phase succeeded there (a run that finished, on a node whose phase was not drawn to fail).
  const nodeOf = new Map(scenario.nodes.map((n) => [n.name, n]));
  const siteOk = (node: string, phase: 'prepare' | 'deploy') =>
    run.runs.some((r) => r.node === node && r.phase === phase && r.finishedAt !== undefined) &&
    (phase === 'prepare' ? nodeOf.get(node)?.prepareFault : nodeOf.get(node)?.deployFault) === undefined;
  for (const node of scenario.nodes) {
    const state = site.nodes[node.name]!;
    const stage = report.nodes[node.name];
    const shows = `prepared ${state.prepareCount}, deployed ${state.deployCount}, runs [${run.runs
      .filter((r) => r.node === node.name)
      .map((r) => `${r.phase}${r.finishedAt === undefined ? ' unfinished' : ''}`)
      .join(', ')}]`;
    if (node.group === undefined) {
      if (state.prepareCount + state.deployCount > 0 || (stage !== undefined && stage !== 'NOT_STARTED'))
        add('untouched-outside-request', `in no group but touched or recorded ${stage}: site shows ${shows}`, node.name);
      continue;
    }
    if (state.prepareCount > 1 || state.deployCount > 1) add('resume-finishes', `a phase ran twice on the node: site shows ${shows}`, node.name);
    if (stage === 'DEPLOYED' && (!siteOk(node.name, 'prepare') || !siteOk(node.name, 'deploy')))
      add('upgraded-rebooted-once', `recorded DEPLOYED but the site shows ${shows}`, node.name);
    if (stage === 'PREPARED' && !siteOk(node.name, 'prepare')) add('upgraded-rebooted-once', `recorded PREPARED but the site shows ${shows}`, node.name);
    if (stage === 'NOT_STARTED' && state.prepareCount + state.deployCount > 0)
      add('not-started-untouched', `recorded NOT_STARTED but the site shows ${shows}`, node.name);
    if (stage === 'FAILED') {
      const explained =
        node.prepareFault !== undefined ||
        node.deployFault !== undefined ||
        // A group failed for its dependency or its criteria records its nodes as they stood; a provisioner call that kept failing may fail a group.
        scenario.apiFaults.length > 0;
      if (!explained) add('failure-is-the-sites', `recorded FAILED, which nothing at the site caused: ${shows}`, node.name);
      if (siteOk(node.name, 'prepare') && siteOk(node.name, 'deploy'))
        add('failed-as-site-shows', `recorded FAILED but prepared and deployed at the site: ${shows}`, node.name);
    }
  }

  // Groups: depends_on held at the site; success criteria judged as the site shows.
  for (const group of scenario.groups) {
    const result = report.groups[group.name];
    if (!result) {
      add('run-error', `group ${group.name} missing from the report`);
      continue;
    }
    const members = scenario.nodes.filter((n) => n.group === group.name || n.alsoIn?.includes(group.name)).map((n) => n.name);
    const mine = run.runs.filter((r) => r.group === group.name);
    if (mine.length > 0) {
      const first = Math.min(...mine.map((r) => r.startedAt));
      for (const dep of group.dependsOn) {
        const depRuns = run.runs.filter((r) => r.group === dep);
        // A hung prepare or deploy never ends at the site: the phase timeout ended it for the run (a hang drawn for the node); any other unfinished run is still in flight.
        const hung = (r: (typeof depRuns)[number]) =>
          r.finishedAt === undefined && (r.phase === 'prepare' ? nodeOf.get(r.node)?.prepareFault : nodeOf.get(r.node)?.deployFault) === 'hang';
        const depLast = Math.max(start, ...depRuns.filter((r) => !hung(r)).map((r) => r.finishedAt ?? Infinity));
        if (report.groups[dep]?.stage !== 'DEPLOYED' || depLast > first)
          add(
            'site-safety',
            `group ${group.name} started at +${(first - start) / 1000}s, before its dependency ${dep} deployed at the site (${report.groups[dep]?.stage}, last run ${depLast === Infinity ? 'unfinished' : `+${(depLast - start) / 1000}s`})`,
          );
      }
    }
    const criteria = group.successCriteria && {
      ...(group.successCriteria.percent_successful_nodes !== undefined ? { percentSuccessfulNodes: group.successCriteria.percent_successful_nodes } : {}),
      ...(group.successCriteria.minimum_successful_nodes !== undefined ? { minimumSuccessfulNodes: group.successCriteria.minimum_successful_nodes } : {}),
      ...(group.successCriteria.maximum_failed_nodes !== undefined ? { maximumFailedNodes: group.successCriteria.maximum_failed_nodes } : {}),
    };
    const count = (phase: 'prepare' | 'deploy') => ({ total: members.length, succeeded: members.filter((n) => siteOk(n, phase)).length });
    const missed = (['prepare', 'deploy'] as const).map((phase) => evaluateSuccessCriteria(criteria, count(phase)));
    if (result.stage === 'DEPLOYED' && missed.some((m) => m.length > 0))
      add(
        'failed-as-site-shows',
        `group ${group.name} recorded DEPLOYED, but the site shows ${count('prepare').succeeded} prepared and ${count('deploy').succeeded} deployed of ${members.length}, which misses ${JSON.stringify(group.successCriteria)}`,
      );
    if (
      result.stage === 'FAILED' &&
      result.failures.length > 0 &&
      result.cause === undefined &&
      result.blockedBy === undefined &&
      missed.every((m) => m.length === 0)
    )
      add(
        'failed-as-site-shows',
        `group ${group.name} recorded FAILED on its criteria (${JSON.stringify(result.failures)}), but the site shows ${count('prepare').succeeded} prepared and ${count('deploy').succeeded} deployed of ${members.length}`,
      );
  }

  // The operator, the end.
  if (stop && !stop.action.resume && !cancel && processEnded) {
    if (run.status !== 'STOPPED' && !['SUCCEEDED', 'FAILED'].includes(stop.stateBefore ?? ''))
      add('stop-ends-stopped', `stopped at +${stop.takenAt}s (answer ${stop.answer}) but the deployment ended ${run.status}`);
    const after = run.runs.filter((r) => (r.startedAt - start) / 1000 > stop.takenAt!);
    if (after.length > 0 && run.status === 'STOPPED')
      add('stop-ends-stopped', `actions started after the stop at +${stop.takenAt}s: ${after.map((r) => `${r.phase} ${r.node}`).join(', ')}`);
  }
  if (resumed && !cancel && processEnded && !['SUCCEEDED', 'FAILED'].includes(run.status ?? ''))
    add('resume-finishes', `resumed, but the deployment ended ${run.status}, not SUCCEEDED or FAILED`);
  if (cancel && processEnded && !['CANCELLED', 'SUCCEEDED', 'FAILED'].includes(run.status ?? ''))
    add('cancel-rules', `cancelled at +${cancel.takenAt}s (answer ${cancel.answer}) but the deployment ended ${run.status}`);
  if (run.status === 'SUCCEEDED' && report.criticalGroupsFailed)
    add('exit-status-agrees', `SUCCEEDED with failed critical group(s) ${report.failedCriticalGroups.join(', ')}`);
  if (run.status === 'FAILED' && !report.criticalGroupsFailed)
    add('exit-status-agrees', `FAILED with no critical group failed: ${JSON.stringify(report.groups).slice(0, 300)}`);
  if (run.status === 'SUCCEEDED') {
    const open = scenario.groups.filter((g) => !['DEPLOYED', 'FAILED'].includes(report.groups[g.name]?.stage ?? ''));
    if (open.length > 0) add('exit-status-agrees', `SUCCEEDED with group(s) neither deployed nor failed: ${open.map((g) => g.name).join(', ')}`);
  }
  for (const outcome of run.outcomes)
    if (outcome.status === 'FAILED' && !(run.status === 'FAILED' && report.criticalGroupsFailed))
      add('run-error', `an execution failed: ${outcome.error ?? ''}: ${(outcome.cause ?? '').slice(0, 300)}`);
  if (processEnded) {
    if (!ENDED.includes(run.status ?? '')) add('no-session-left-running', `the process ended with the deployment ${run.status}`);
    else if (run.status !== 'STOPPED') for (const [name, owner] of run.lockOwners) add('site-left-clean', `still locked by ${owner}`, name);
  }
  return found;
}
