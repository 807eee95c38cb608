import { parseSiteMark } from '../../core/site/node-claims';
import { peakOutOfService } from '../../simulator/out-of-service';
import { operatorFacts, type Violation } from './invariants';
import { GRAPH_TASKS, type TaskGraphRun } from './task-graph-scenario';

/**
 * The invariants of a task-graph run (bench/scenarios/invariants.ts has the upgrade's), judged
 * against the site's own record: its task log (which task ran on which node, when, with what
 * result), each node's drain, boot and resume counts, its state and reason, and its out-of-service
 * intervals; the run's own view only says what it claims.
 */
const SETTLED = ['SUCCEEDED', 'FAILED', 'STOPPED', 'CANCELLED'];

export function checkTaskGraphInvariants(run: TaskGraphRun): Violation[] {
  const found: Violation[] = [];
  const add = (invariant: Violation['invariant'], text: string, node?: string) => found.push({ invariant, text, ...(node ? { node } : {}) });
  const { scenario, site, view, runId } = run;
  const { processEnded, stop, cancel, resumed } = operatorFacts(run);

  for (const violation of site.violations) add('site-safety', violation);
  if (run.budgetExceeded) add('no-progress', `the run had not ended after ${run.budgetExceeded} (status ${run.status ?? 'none'})`);
  // A run whose node tasks failed ends its execution with TaskRunFailed (exit 1): its outcome, not an error of the run.
  for (const outcome of run.outcomes)
    if (outcome.status === 'FAILED' && !(outcome.error === 'TaskRunFailed' && run.status === 'FAILED'))
      add('run-error', `an execution failed: ${outcome.error ?? ''}: ${(outcome.cause ?? '').slice(0, 300)}`);
  if (!view) {
    add('run-error', 'the workflow created no task run');
    return found;
  }

  // An admin's drain during the run (the last one taken on the node).
  const adminLater = new Map(
    run.operator
      .filter((o) => o.action.kind === 'admin-drain' && o.takenAt !== undefined && !o.answer?.startsWith('refused'))
      .map((o) => [o.action.node!, o.action.reason!]),
  );
  for (const scenarioNode of scenario.nodes) {
    const later = adminLater.get(scenarioNode.name);
    // A node an admin drained during the run is held by the admin's reason from then on; what the run did before is judged by the counts below.
    const node = later === undefined ? scenarioNode : { ...scenarioNode, adminDrain: later, adminDuringRun: true };
    const state = site.nodes[node.name]!;
    const log = site.taskLog.filter((e) => e.node === node.name);
    const shows = `${state.wlmState}${state.wlmReason !== undefined ? ` '${state.wlmReason}'` : ''}, drained ${state.drainCount}, booted ${state.bootCount}, resumed ${state.resumeCount}, tasks [${log.map((e) => `${e.task} ${e.result ?? 'running'}`).join(', ')}]`;
    if (!node.inGraph) {
      if (log.length > 0 || state.drainCount + state.bootCount + state.resumeCount > 0 || view.nodes[node.name] !== undefined)
        add('untouched-outside-request', `outside the graph's role but touched or recorded: site shows ${shows}`, node.name);
      continue;
    }
    // Each task of the node ran at most once at the site (a resume follows what was in flight, never starts it again).
    for (const task of GRAPH_TASKS) {
      const runs = log.filter((e) => e.task === task).length;
      if (runs > 1) add('resume-finishes', `${task} ran ${runs} times at the site: ${shows}`, node.name);
    }
    // An admin's drain: left alone, or kept with its reason byte for byte.
    // (Slurm itself appends ` : Not responding` to the reason of a node whose slurmd is silent for SlurmdTimeout:
    // ping_nodes.c → set_node_down_ptr → set_node_reason, from 23.02; here a boot that fails or hangs, or a node that never returns.)
    const silent = node.neverReturns === true || node.bootFault !== undefined;
    const slurmSuffix = silent && state.wlmReason === `${node.adminDrain} : Not responding`;
    if (node.adminDrain !== undefined && (!/DRAIN/.test(state.wlmState) || (state.wlmReason !== node.adminDrain && !slurmSuffix)))
      add('admin-drain-kept', `admin's drain '${node.adminDrain}' not kept as written: site shows ${shows}`, node.name);
    const states = view.nodes[node.name] ?? {};
    const recorded = GRAPH_TASKS.map((t) => states[t]);
    if (recorded.every((s) => s === 'ACTIVE')) {
      // A node an admin drained is rebooted once, neither drained over nor resumed: its drain and reason stay the admin's.
      const admin = node.adminDrain !== undefined;
      const done =
        'adminDuringRun' in node
          ? GRAPH_TASKS.every((t) => log.filter((e) => e.task === t).length <= 1) && log.some((e) => e.task === 'reboot_compute' && e.result === 'ok')
          : admin
            ? log.length === 1 && log[0]!.task === 'reboot_compute' && log[0]!.result === 'ok' && state.drainCount === 0 && state.resumeCount === 0
            : GRAPH_TASKS.every((t) => log.filter((e) => e.task === t && e.result === 'ok').length === 1) && state.drainCount === 1 && state.resumeCount === 1;
      if (!done || state.bootCount !== 1) add('upgraded-rebooted-once', `every task recorded done, but the site shows ${shows}`, node.name);
      if (state.killedJobs > 0) add('upgraded-after-last-job', `its reboot killed ${state.killedJobs} job(s)`, node.name);
      if (node.adminDrain === undefined && node.neverReturns !== true && /DRAIN|DOWN|FAIL|REBOOT/.test(state.wlmState))
        add('upgraded-back-in-service', `every task recorded done, but the site shows ${shows}`, node.name);
      // The site's record: a node that never registered with Slurm after its boot never came back into service (not responding, then DOWN*).
      if (node.neverReturns === true)
        add('upgraded-back-in-service', `every task recorded done, but the node never registered with Slurm after its reboot: site shows ${shows}`, node.name);
      if (parseSiteMark(state.wlmReason)?.runId === runId) add('no-claim-left', `every task done, but its reason still names the run: ${shows}`, node.name);
    } else if (recorded.some((s) => s === 'ERROR')) {
      const failed = GRAPH_TASKS.find((t) => states[t] === 'ERROR')!;
      const atSite = log.find((e) => e.task === failed);
      // A resume the site took (logged ok) fails when the node never answers again: the site shows it DOWN or not responding.
      const unanswered = failed === 'resume_compute' && (/DOWN/.test(state.wlmState) || state.wlmState.endsWith('*'));
      // (The resume of a node an admin drained makes no site call: it waits for the node to answer, the admin's drain kept.)
      const keptAdmin = failed === 'resume_compute' && node.adminDrain !== undefined && unanswered;
      if ((!atSite && !keptAdmin) || (atSite?.result === 'ok' && !unanswered))
        add('failed-as-site-shows', `${failed} recorded ERROR but the site shows ${shows}`, node.name);
      // A boot that fails or hangs fails the reboot; a node that boots but never registers with Slurm again fails its resume (or its reboot, where the boot ends at registration).
      const explained =
        (failed === 'reboot_compute' && (node.bootFault !== undefined || node.neverReturns === true)) ||
        (failed === 'resume_compute' && node.neverReturns === true);
      if (!explained)
        add(
          'failure-is-the-sites',
          `${failed} recorded ERROR (${view.errors[node.name]?.[failed] ?? ''}), which nothing at the site caused: ${shows}`,
          node.name,
        );
    } else {
      // Never started, left alone, or cut short by a stop or cancel: a task that never started did nothing at the site.
      for (const task of GRAPH_TASKS)
        if ((states[task] === 'TODO' || states[task] === 'BLOCKED' || states[task] === undefined) && log.some((e) => e.task === task))
          add('not-started-untouched', `${task} recorded ${states[task] ?? 'nothing'} but the site ran it: ${shows}`, node.name);
      if (state.bootCount > 0 && states.reboot_compute !== 'ACTIVE' && states.reboot_compute !== 'TRANSITION')
        add('not-started-untouched', `recorded ${JSON.stringify(states)} but booted: ${shows}`, node.name);
    }
    // Once the run ended, none of its claims stays on a node it does not hold drained for a failure.
    // (A stopped run keeps the drains of the nodes it was at: its resume carries them on.)
    if (
      processEnded &&
      SETTLED.includes(run.status ?? '') &&
      run.status !== 'STOPPED' &&
      parseSiteMark(state.wlmReason)?.runId === runId &&
      !recorded.includes('ERROR')
    )
      add('site-left-clean', `the ended run (${run.status}) left its claim: site shows ${shows}`, node.name);
  }

  // maxInTransition over the site's out-of-service intervals, each cut at the node's last task's end (a node failed stays out of service, but holds no slot)
  // and started no earlier than its first task at the site: an admin's drain during the run takes a node out of service before the run touches it.
  const max = scenario.request.maxInTransition;
  if (max !== undefined) {
    const intervals = scenario.nodes
      .filter((n) => n.inGraph && n.adminDrain === undefined)
      .flatMap((n) => {
        const log = site.taskLog.filter((e) => e.node === n.name);
        // A reboot that hangs never ends in the site's log: the run gave it up at its timeout.
        const endOf = (e: (typeof log)[number]) =>
          e.end ?? (e.task === 'reboot_compute' && n.bootFault === 'hang' ? e.start + scenario.rebootTimeoutSeconds : undefined);
        if (log.length === 0) return [];
        const first = Math.min(...log.map((e) => e.start));
        const last = log.some((e) => endOf(e) === undefined) ? null : Math.max(...log.map((e) => endOf(e)!));
        return site.nodes[n.name]!.outOfService.map(([a, b]): [number, number | null] => [
          Math.max(a, first),
          last === null ? b : Math.min(b ?? Infinity, last),
        ]);
      })
      .filter(([a, b]) => b === null || b > a);
    const peak = peakOutOfService(intervals);
    if (peak > max) add('cap-held', `${peak} nodes out of service at once, over maxInTransition ${max}`);
  }

  // The operator: a stop ends STOPPED and starts nothing after it; a resume finishes; a cancel ends CANCELLED.
  if (stop && !stop.action.resume && !cancel && processEnded) {
    if (run.status !== 'STOPPED') add('stop-ends-stopped', `stopped at +${stop.takenAt}s (answer ${stop.answer}) but the run ended ${run.status}`);
    const after = site.taskLog.filter((e) => e.start > stop.takenAt!);
    if (after.length > 0 && run.status === 'STOPPED')
      add('stop-ends-stopped', `tasks started after the stop at +${stop.takenAt}s: ${after.map((e) => `${e.node}/${e.task}@${e.start}`).join(', ')}`);
  }
  if (resumed && !cancel && processEnded && !['SUCCEEDED', 'FAILED'].includes(run.status ?? ''))
    add('resume-finishes', `resumed, but the run ended ${run.status}, not SUCCEEDED or FAILED`);
  if (cancel && processEnded) {
    if (run.status !== 'CANCELLED' && run.status !== 'SUCCEEDED' && run.status !== 'FAILED')
      add('cancel-rules', `cancelled at +${cancel.takenAt}s (answer ${cancel.answer}) but the run ended ${run.status}`);
    for (const [name, state] of Object.entries(site.nodes))
      if (run.status === 'CANCELLED' && /DRAIN/.test(state.wlmState) && parseSiteMark(state.wlmReason)?.runId === runId)
        add('cancel-rules', `cancelled, but the run's drain was not lifted: ${state.wlmState} '${state.wlmReason}'`, name);
  }
  // The end.
  if (run.exitStatus === 0) {
    const open = scenario.nodes.filter(
      (n) => n.inGraph && view.leftAlone[n.name] === undefined && GRAPH_TASKS.some((t) => view.nodes[n.name]?.[t] !== 'ACTIVE'),
    );
    if (open.length > 0) add('exit-status-agrees', `exit 0 with node(s) whose tasks did not all run: ${open.map((n) => n.name).join(', ')}`);
  }
  if (processEnded) {
    if (!SETTLED.includes(run.status ?? '')) add('no-session-left-running', `the process ended with the run ${run.status}`);
    else for (const [name, owner] of run.lockOwners) add('site-left-clean', `still locked by ${owner}`, name);
  }
  return found;
}
