import { FailureReason } from '../../core/rolling-upgrade/session';
import { parseUpgradeRequest } from '../../core/rolling-upgrade/upgrade-request';
import { upgradePolicy } from '../../core/rolling-upgrade/upgrade-policy';
import { isFailureReason, parseSiteMark } from '../../core/site/node-claims';
import { peakOutOfService } from '../../simulator/out-of-service';
import type { OperatorRecord, ScenarioRun } from './run-scenario';
import type { ScenarioNode } from './scenario';
import { checkSiteEventInvariants, type SiteEventInvariant } from './site-event-invariants';

/**
 * The invariants every run must keep, whatever path it took, judged against the site's own record
 * (the simulator's node states, its change log of drains, resumes, fails and boots with the run
 * each names, its out-of-service intervals and reservations), never against the product's record
 * alone. Issue 26 lists them; each violation names the invariant it breaks.
 */
export interface Violation {
  invariant: Invariant;
  node?: string;
  text: string;
}

export type Invariant =
  | 'upgraded-rebooted-once'
  | 'upgraded-after-last-job'
  | 'upgraded-back-in-service'
  | 'no-claim-left'
  | 'failed-as-site-shows'
  | 'failure-is-the-sites'
  | 'untouched-outside-request'
  | 'admin-drain-kept'
  | 'not-started-untouched'
  | 'cap-held'
  | 'stop-ends-stopped'
  | 'resume-finishes'
  | 'cancel-rules'
  | 'exit-status-agrees'
  | 'no-session-left-running'
  | 'site-left-clean'
  | 'site-safety'
  | 'run-error'
  | 'bad-input-refused'
  | 'says-why-it-waits'
  | 'no-progress'
  | 'rebooted-at-most-once'
  | SiteEventInvariant;

const OUT_OF_SERVICE = /DRAIN|DOWN|FAIL|REBOOT/;
const SETTLED_STATES = ['READY', 'DELETED', 'HALTED', 'STOPPED'];

/** The failure reasons the scenario's own site explains for a node (a fault it was given, a job longer than the quiesce timeout). */
function siteCausedFailures(run: ScenarioRun, node: ScenarioNode): Set<string> {
  const { scenario } = run;
  const reasons = new Set<string>();
  if (node.bootFault === 'fail') reasons.add(FailureReason.bootFailed);
  if (node.bootFault === 'hang') reasons.add(FailureReason.bootTimeout);
  if (node.neverReturns) reasons.add(FailureReason.wlmTimeout);
  if (node.healthCheckFails) reasons.add(FailureReason.healthCheckFailed);
  // Through `scontrol reboot` the boot ends when slurmd registers: a node that fails to boot or never returns is a boot that never ends.
  if (scenario.connectors === 'ssm' && (node.bootFault || node.neverReturns)) {
    reasons.add(FailureReason.bootTimeout);
    reasons.add(FailureReason.wlmTimeout);
    // slurm-reboot reports the boot failed once Slurm gives the reboot up (ResumeTimeout: DOWN `reboot timed out`).
    reasons.add(FailureReason.bootFailed);
  }
  const quiesce = Number(scenario.request.quiesceTimeoutSeconds);
  if ((node.busySeconds !== undefined && node.busySeconds > quiesce) || scenario.workload) reasons.add(FailureReason.quiesceTimeout);
  if (scenario.request.mode === 'lockstep' && run.operator.some((o) => o.action.kind === 'cancel' && o.takenAt !== undefined))
    reasons.add(FailureReason.sessionDeleted);
  return reasons;
}

/** The scenario asks for a maintenance window on a day that never comes. */
export function neverOpeningWindow(scenario: ScenarioRun['scenario']): boolean {
  return JSON.stringify(scenario.request.maintenanceWindows ?? []).includes('0 0 30 2 *');
}

/**
 * What the operator's actions of a run (any kind) did: the stop, cancel and resume the control plane took (a
 * refused one is none), and whether the process ended of itself (not killed without a resume, nor over its budget).
 */
export function operatorFacts(run: { operator: readonly OperatorRecord[]; budgetExceeded?: string }) {
  const killedWithoutResume = run.operator.some((o) => o.action.kind === 'kill' && o.takenAt !== undefined && !o.action.resume);
  const processEnded = !killedWithoutResume && run.budgetExceeded === undefined;
  const taken = run.operator.filter((o) => o.takenAt !== undefined && !o.answer?.startsWith('refused'));
  const stop = taken.find((o) => o.action.kind === 'stop');
  const cancel = taken.find((o) => o.action.kind === 'cancel');
  const resumed = taken.some((o) => (o.action.kind === 'stop' || o.action.kind === 'kill') && o.action.resume);
  return { processEnded, stop, cancel, resumed };
}

export function checkInvariants(run: ScenarioRun): Violation[] {
  const found: Violation[] = [];
  const add = (invariant: Invariant, text: string, node?: string) => found.push({ invariant, text, ...(node ? { node } : {}) });
  const { scenario, site, report, upgradeId } = run;
  const ours = (by: string | undefined) => by !== undefined && upgradeId.startsWith(by);
  const changesOf = (name: string) => site.changes.filter((c) => c.node === name);
  const { processEnded, stop, cancel, resumed } = operatorFacts(run);
  const adminDrainedAt = new Map<string, { at: number; reason: string }>();
  for (const node of scenario.nodes) if (node.adminDrain !== undefined) adminDrainedAt.set(node.name, { at: 0, reason: node.adminDrain });
  for (const o of run.operator)
    if (o.action.kind === 'admin-drain' && o.takenAt !== undefined && !o.answer?.startsWith('refused'))
      adminDrainedAt.set(o.action.node!, { at: o.takenAt, reason: o.action.reason! });

  for (const violation of site.violations) add('site-safety', violation);
  // A maintenance window that never opens (30 February) is bad input: refused, naming the field, before any node is touched (issue 26 item 5).
  if (neverOpeningWindow(scenario)) {
    const refused = run.outcomes.some((o) => o.status === 'FAILED' && o.error === 'InvalidInputError' && /maintenanceWindows\[0\]\.cron/.test(o.cause ?? ''));
    if (!refused) add('bad-input-refused', `a maintenance window that never opens was not refused (session ${report?.state ?? 'none'})`);
    if (site.changes.length > 0)
      add('bad-input-refused', `the request was bad, yet the site changed: ${site.changes.map((c) => `${c.change} ${c.node}`).join(', ')}`);
    return found;
  }
  if (run.budgetExceeded) {
    const last = report?.messageLog.at(-1);
    add(
      'no-progress',
      `the run had not ended after ${run.budgetExceeded} (state ${report?.state ?? 'none'}, last message: ${last ? `'${last.text}'` : 'none'})`,
    );
  }
  const silent = run.silence[0];
  if (silent)
    add(
      'says-why-it-waits',
      `${run.silence.length} wait(s) of more than two polls with nothing in flight and no message, the first from +${silent.from}s to +${silent.to}s` +
        ` (waiting: ${silent.waiting ?? 'not said'}; last message: '${silent.lastMessage ?? ''}')`,
    );
  for (const outcome of run.outcomes)
    if (outcome.status === 'FAILED') add('run-error', `an execution failed: ${outcome.error ?? ''}: ${(outcome.cause ?? '').slice(0, 300)}`);
  if (!report) {
    add('run-error', 'the workflow created no session');
    return found;
  }

  for (const node of scenario.nodes) {
    const state = site.nodes[node.name]!;
    const record = report.nodes[node.name];
    const changes = changesOf(node.name);
    const boots = changes.filter((c) => c.change === 'boot');
    const admin = adminDrainedAt.get(node.name);
    const inGroups = Object.keys(site.groups).filter((label) => site.groups[label]!.includes(node.name));
    const shows = `${state.wlmState}${state.wlmReason !== undefined ? ` '${state.wlmReason}'` : ''}, booted ${state.bootCount}, in [${inGroups.join(', ')}]`;

    if (!node.inRequest) {
      if (changes.length > 0 || state.bootCount > 0 || record !== undefined)
        add(
          'untouched-outside-request',
          `outside the request but ${changes.map((c) => `${c.change} by ${c.by ?? '?'}`).join(', ') || 'recorded'}; site shows ${shows}`,
          node.name,
        );
      continue;
    }
    if (!record) {
      add('not-started-untouched', 'in the request but the session has no record of it', node.name);
      continue;
    }
    // Whatever the session recorded (a boot that failed or hung included): the site booted it once at most.
    if (state.bootCount > 1) add('rebooted-at-most-once', `recorded ${record.status} but the site booted it ${state.bootCount} times`, node.name);
    // An admin's drain: never drained by us from then on, kept, its reason byte for byte (a node failed by us carries our failure mark instead).
    if (admin) {
      // From the admin's drain on, in the site's own order (an admin's drain mid-run is the first drain naming no run at or after its moment).
      const adminIndex =
        admin.at === 0 ? -1 : changes.findIndex((c) => c.change === 'drain' && c.by === undefined && (c.at - run.startedAt) / 1000 >= admin.at);
      const drainedByUs = changes.filter((c, i) => i > adminIndex && c.change === 'drain' && ours(c.by));
      if (drainedByUs.length > 0) add('admin-drain-kept', `drained by this session after an admin drained it ('${admin.reason}')`, node.name);
      // A process that did not end (killed for good, or by the runner) may have left it mid-reboot: Slurm's ' : reboot issued' after the reason.
      if (record.status !== 'FAILED' && processEnded && (!/DRAIN/.test(state.wlmState) || state.wlmReason !== admin.reason))
        add('admin-drain-kept', `admin's drain '${admin.reason}' not kept as written: site shows ${shows}`, node.name);
    }
    if (record.status === 'UPGRADED') {
      // `scontrol reboot` of a node an admin drained keeps the admin's reason: the site names no run for that boot (only this session reboots here).
      const othersBoots = boots.filter((c) => c.by !== undefined && !ours(c.by));
      if (state.bootCount !== 1 || othersBoots.length > 0)
        add('upgraded-rebooted-once', `recorded UPGRADED but booted ${state.bootCount} time(s), ${othersBoots.length} by another run`, node.name);
      if (state.killedJobs > 0) add('upgraded-after-last-job', `recorded UPGRADED but its reboot killed ${state.killedJobs} job(s)`, node.name);
      if (!admin && OUT_OF_SERVICE.test(state.wlmState)) add('upgraded-back-in-service', `recorded UPGRADED but the site shows ${shows}`, node.name);
      // A process killed mid-step leaves its step's nodes in the upgrading group until a resume ends the step.
      if (inGroups.includes('failed') || (inGroups.includes('upgrading') && processEnded))
        add('upgraded-back-in-service', `recorded UPGRADED but in [${inGroups.join(', ')}]`, node.name);
      if (parseSiteMark(state.wlmReason)?.runId === upgradeId)
        add('no-claim-left', `recorded UPGRADED but its reason still names this session: '${state.wlmReason}'`, node.name);
    } else if (record.status === 'FAILED') {
      const reason = record.reason ?? '';
      // Slurm forgets the features `scontrol update` set (the Slurm inventory's groups) on a reconfigure or restart; the run puts them back when it next reads the group (docs/guides/upgrade-a-slurm-cluster.md, Slurm inventory conventions).
      const groupsForgotten = run.operator.some((o) => (o.action.kind === 'reconfigure' || o.action.kind === 'restart-slurmctld') && o.takenAt !== undefined);
      // An admin who drains a node after the run failed it gives it their own reason (a drain clears FAIL): the site then shows the admin's word.
      const adminAfter = admin !== undefined && admin.at > 0;
      if (
        !adminAfter &&
        (!isFailureReason(state.wlmReason, reason) || !OUT_OF_SERVICE.test(state.wlmState) || (!inGroups.includes('failed') && !groupsForgotten))
      )
        add('failed-as-site-shows', `recorded FAILED (${reason}) but the site shows ${shows}`, node.name);
      if (!siteCausedFailures(run, node).has(reason))
        add(
          'failure-is-the-sites',
          `recorded FAILED (${reason}), which nothing at the site caused (booted ${state.bootCount}): the control plane's own fault`,
          node.name,
        );
    } else {
      // NOT_STARTED (never started, left alone, put back by a stop or cancel) or IN_PROGRESS (a run that did not end).
      const settled = SETTLED_STATES.includes(report.state);
      if (record.status === 'NOT_STARTED' || settled) {
        if (boots.some((c) => ours(c.by))) add('not-started-untouched', `recorded ${record.status} but booted by this session`, node.name);
        if (parseSiteMark(state.wlmReason)?.runId === upgradeId && processEnded)
          add('not-started-untouched', `recorded ${record.status} but still carries this session's mark: site shows ${shows}`, node.name);
        if (!admin && /DRAIN/.test(state.wlmState) && node.adminDrain === undefined && processEnded)
          add('not-started-untouched', `recorded ${record.status} but left drained: site shows ${shows}`, node.name);
      }
      if (record.status === 'IN_PROGRESS' && settled) add('resume-finishes', `recorded IN_PROGRESS in a session that ended ${report.state}`, node.name);
    }
  }

  // Caps, from the site's out-of-service intervals of the request's nodes. A node an admin drained is out of service by the admin's
  // will (its drain, given back its reason once rebooted, opens an interval that never ends): it holds no slot of ours.
  const request = parseUpgradeRequest(scenario.request);
  const requestNodes = scenario.nodes.filter((n) => n.inRequest && !adminDrainedAt.has(n.name));
  const policy = upgradePolicy(request, scenario.nodes.filter((n) => n.inRequest).length);
  const cap = policy.maxInTransition;
  const peak = peakOutOfService(requestNodes.flatMap((n) => site.nodes[n.name]!.outOfService));
  if (peak > cap) add('cap-held', `${peak} nodes out of service at once, over the cap of ${cap}`);
  if (policy.maxPerRack !== undefined) {
    for (const rack of new Set(requestNodes.map((n) => n.rack))) {
      const rackPeak = peakOutOfService(requestNodes.filter((n) => n.rack === rack).flatMap((n) => site.nodes[n.name]!.outOfService));
      if (rackPeak > policy.maxPerRack) add('cap-held', `${rackPeak} nodes of rack ${rack} out of service at once, over the rack cap of ${policy.maxPerRack}`);
    }
  }

  // The operator's requests.
  // A stop taken while the plan's last nodes are in flight lets them finish, and the plan's end is no stop: the session
  // completes (stopSwitchesAt). Then the site shows no drain of the session's after the stop.
  const drainedAfterStop = stop ? site.changes.filter((c) => c.change === 'drain' && ours(c.by) && (c.at - run.startedAt) / 1000 > (stop.takenAt ?? 0)) : [];
  const planEndedUnderStop = report.state === 'READY' && drainedAfterStop.length === 0;
  if (stop && !stop.action.resume && !cancel && report.state !== 'STOPPED' && !planEndedUnderStop && processEnded)
    add(
      'stop-ends-stopped',
      `stopped at +${stop.takenAt}s (answer ${stop.answer}) but the session ended ${report.state}` +
        (drainedAfterStop.length > 0 ? `, draining ${drainedAfterStop.map((c) => c.node).join(', ')} after the stop` : ''),
    );
  if (resumed && !cancel && processEnded && !['READY', 'HALTED'].includes(report.state))
    add('resume-finishes', `resumed, but the session ended ${report.state}, not READY or HALTED`);
  if (cancel && processEnded) {
    if (report.state !== 'DELETED') add('cancel-rules', `cancelled at +${cancel.takenAt}s (answer ${cancel.answer}) but the session ended ${report.state}`);
    const deleted = Object.entries(report.nodes).filter(([, n]) => n.status === 'FAILED' && n.reason === FailureReason.sessionDeleted);
    if (request.mode === 'window' && deleted.length > 0)
      add('cancel-rules', `a window's cancel failed ${deleted.length} node(s) with ${FailureReason.sessionDeleted}`);
  }

  // The site's triggers, the relay's deliveries, the waits they resume.
  const stopsAndCancels = run.operator.filter(
    (o) => (o.action.kind === 'stop' || o.action.kind === 'cancel') && o.takenAt !== undefined && !o.answer?.startsWith('refused'),
  ).length;
  checkSiteEventInvariants(run, { processEnded, settled: SETTLED_STATES.includes(report.state), stopsAndCancels }, add);

  // The end: exit status, state, what stays on the site.
  if (run.exitStatus === 0) {
    if (report.state !== 'READY') add('exit-status-agrees', `exit 0 but the session is ${report.state}`);
    const open = Object.entries(report.nodes).filter(
      ([, n]) => n.status === 'IN_PROGRESS' || (n.status === 'NOT_STARTED' && !n.reason?.startsWith('left alone')),
    );
    if (open.length > 0)
      add(
        'exit-status-agrees',
        `exit 0 (completed) with ${open.length} node(s) neither upgraded, failed nor left alone: ${open.map(([name]) => name).join(', ')}`,
      );
  }
  if (processEnded) {
    if (!SETTLED_STATES.includes(report.state)) add('no-session-left-running', `the process ended with the session ${report.state}`);
    if (SETTLED_STATES.includes(report.state)) {
      const left = run.reservations.filter((r) => r.name.includes(upgradeId));
      if (left.length > 0) add('site-left-clean', `reservations of the ended session left: ${left.map((r) => r.name).join(', ')}`);
      for (const [name, owner] of run.lockOwners) add('site-left-clean', `still locked by ${owner}`, name);
      for (const [name, state] of Object.entries(site.nodes)) {
        const mark = parseSiteMark(state.wlmReason);
        if (mark?.claim && mark.runId === upgradeId) add('site-left-clean', `still claimed by the ended session: '${state.wlmReason}'`, name);
      }
      const upgrading = site.groups.upgrading ?? [];
      if (upgrading.length > 0) add('site-left-clean', `the upgrading group still holds ${upgrading.join(', ')}`);
    }
  }
  return found;
}
