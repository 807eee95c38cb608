import { SiteServiceError, UnknownNodesError } from '../errors';
import type { BootSessionStatus, WlmNode } from '../site/site-nodes';
import { shortList } from '../text';
import { drainClaim } from '../site/node-claims';
import { FailureReason, type NodeRecord, type UpgradeSession } from './session';
import {
  emptyBootSession,
  enterStage,
  failNodes,
  returnToService,
  needsOurDrain,
  names,
  nextStep,
  recordNodes,
  releaseLocks,
  type NodeAction,
  type SiteWait,
  type StageDecision,
  type StageInput,
  unrestoredReasons,
  secondsUntilTimeout,
} from './stage-decision';
import { stepHeading, stepText } from './step-plan';
import { isQuiet } from './wlm-readiness';
import { checkTimesOutAt, describeHealthFailures, returnVerdict, startChecks, type HealthCheckResult } from './health-check';
import { healthCheckCommand } from './upgrade-request';
import { upgradePolicy } from './upgrade-policy';

/**
 * The decisions of one step, stage by stage (CRUS's watcher): each is given what the activity
 * observed and returns what to do; none touches the site or the store.
 */

type WlmObserved = { wlm: ReadonlyMap<string, WlmNode> };

/** Boot sessions are named after the session and step, so a retried start finds the one already made. */
export function bootSessionName(upgradeId: string, step: number): string {
  return `rollout-${upgradeId}-step-${step}`;
}

export interface StartStepObserved {
  /** Members of the failed group, read at step 0 only (CRUS empties it when a session starts). */
  failedMembers: readonly string[];
  /** Step nodes locked by other sessions, with their owner; the locks taken were given back (all or none). */
  heldByOthers: ReadonlyMap<string, string>;
  /** The step's nodes in the workload manager, read once the locks are held. */
  wlm: ReadonlyMap<string, WlmNode>;
}

/**
 * STARTING: at step 0 empty the failed group; then, with the step's nodes locked (all or none, so
 * two sessions never work on one node and cannot deadlock), drain them. A node already drained,
 * by us or by an admin, keeps its drain and its reason.
 */
export function decideStartStep({ session, progress, nodes, observed, now }: StageInput<StartStepObserved>): StageDecision {
  const emptyFailed: NodeAction[] =
    progress.step === 0 && observed.failedMembers.length > 0
      ? [{ type: 'removeFromGroup', label: session.failedLabel, nodes: [...observed.failedMembers] }]
      : [];
  if (progress.step >= session.stepCount) {
    return { progress: enterStage('CLEANUP', progress.step, now), waitSeconds: 0, actions: emptyFailed, message: 'No nodes left to upgrade' };
  }
  // The failure budget, as the window keeps it: the step in flight finished; no new step starts.
  const budget = upgradePolicy(session, session.nodeCount).maxFailedNodes;
  const failed = progress.counts?.failed ?? 0;
  if (budget !== undefined && failed > budget) {
    const halted = { reason: `${failed} failed nodes exceed maxFailed (${budget})`, at: now };
    return {
      progress: enterStage('CLEANUP', progress.step, now, { halted, ...(progress.counts ? { counts: progress.counts } : {}) }),
      waitSeconds: 0,
      actions: emptyFailed,
      message: `Halted before ${stepText(progress.step, session.stepCount)}: ${halted.reason}; the steps after it are not started`,
    };
  }
  if (nodes.length === 0) return nextStep(progress.step, now, emptyFailed);

  if (observed.heldByOthers.size > 0) {
    // Nothing has been done to these nodes yet: wait our turn, and say so at each poll while it lasts (a run that
    // makes no progress is never silent; the increment runs once a poll here).
    const owners = [...new Set(observed.heldByOthers.values())].join(', ');
    return {
      progress: progress.lockWaitSince !== undefined ? progress : { ...progress, lockWaitSince: now },
      waitSeconds: session.pollIntervalSeconds,
      actions: emptyFailed,
      message: `${stepHeading(progress.step, session.stepCount)} waits for nodes locked by session ${owners}: ${shortList([...observed.heldByOthers.keys()])}`,
    };
  }

  const unknown = nodes.filter((n) => !observed.wlm.has(n.name));
  if (unknown.length > 0) {
    return { progress, waitSeconds: 0, actions: emptyFailed, error: new UnknownNodesError('workload-manager', names(unknown)) };
  }
  const toDrain = nodes.filter((n) => needsOurDrain(observed.wlm.get(n.name), session.upgradeId));
  return {
    progress: enterStage('QUIESCING', progress.step, now),
    waitSeconds: 0,
    actions: [
      ...emptyFailed,
      ...(toDrain.length > 0 ? [{ type: 'drain' as const, nodes: names(toDrain), reason: drainClaim('upgrade', session.upgradeId) }] : []),
      ...recordNodes(nodes, { status: 'IN_PROGRESS', phase: 'DRAINING' }),
    ],
    message: `${stepHeading(progress.step, session.stepCount)}: draining ${nodes.length} node(s): ${shortList(names(nodes))}`,
  };
}

/** QUIESCING: wait until every step node is drained of jobs; past the quiesce timeout, fail the busy ones and go on. */
export function decideQuiesce({ session, progress, nodes, observed, now }: StageInput<WlmObserved>): StageDecision {
  const busy = nodes.filter((n) => {
    const state = observed.wlm.get(n.name);
    return !state || !isQuiet(state);
  });
  if (busy.length === 0) {
    return {
      progress: enterStage('QUIESCED', progress.step, now),
      waitSeconds: 0,
      actions: recordNodes(
        nodes.filter((n) => n.phase !== 'QUIESCED'),
        { status: 'IN_PROGRESS', phase: 'QUIESCED' },
      ),
      message: `${stepHeading(progress.step, session.stepCount)}: ${nodes.length} node(s) quiesced`,
    };
  }
  // The live view: each node that became quiet is recorded so, with the time (only those that changed: one write at most per node).
  const quietNow = nodes.filter((n) => n.phase !== 'QUIESCED' && !busy.includes(n));
  const quiet = recordNodes(quietNow, { status: 'IN_PROGRESS', phase: 'QUIESCED' });
  if (now - progress.stageStartedAt < session.quiesceTimeoutSeconds * 1000) {
    return {
      progress,
      waitSeconds: session.pollIntervalSeconds,
      actions: quiet,
      siteWait: { recheckSeconds: secondsUntilTimeout(progress.stageStartedAt, session.quiesceTimeoutSeconds, now), quiesce: true },
    };
  }
  const actions = [...quiet, ...failNodes(session, busy, FailureReason.quiesceTimeout, observed.wlm)];
  const message = `${stepHeading(progress.step, session.stepCount)}: ${busy.length} node(s) still busy after ${session.quiesceTimeoutSeconds} s failed: ${shortList(names(busy))}`;
  if (busy.length === nodes.length) return nextStep(progress.step, now, actions, message);
  return { progress: enterStage('QUIESCED', progress.step, now), waitSeconds: 0, actions, message };
}

/**
 * QUIESCED: empty the upgrading group, put the step's nodes in it and start a reboot limited to it.
 * The boot request time is saved before the boot starts: a node counts as rebooted only if it
 * registered after it.
 */
export function decideBootStep({ session, progress, nodes, observed, now }: StageInput<{ upgradingMembers: readonly string[] }>): StageDecision {
  if (nodes.length === 0) return nextStep(progress.step, now);
  const nodeNames = names(nodes);
  const known = progress.bootRequestedAt !== undefined && progress.bootSessionName !== undefined;
  const bootRequestedAt = known ? progress.bootRequestedAt! : now;
  const name = known ? progress.bootSessionName! : bootSessionName(session.upgradeId, progress.step);
  const strangers = observed.upgradingMembers.filter((m) => !nodeNames.includes(m));
  return {
    progress: enterStage('BOOTING', progress.step, now, { bootRequestedAt, bootSessionName: name }),
    waitSeconds: session.pollIntervalSeconds,
    siteWait: { recheckSeconds: session.bootTimeoutSeconds, afterBoot: true },
    actions: [
      ...(known ? [] : [{ type: 'saveProgress' as const, expected: progress, progress: { ...progress, bootRequestedAt, bootSessionName: name } }]),
      ...(strangers.length > 0 ? [{ type: 'removeFromGroup' as const, label: session.upgradingLabel, nodes: strangers }] : []),
      { type: 'addToGroup', label: session.upgradingLabel, nodes: nodeNames },
      { type: 'startBoot', name, template: session.upgradeTemplateId, limit: { label: session.upgradingLabel } },
      ...recordNodes(nodes, { status: 'IN_PROGRESS', phase: 'BOOTING' }),
    ],
    message: `${stepHeading(progress.step, session.stepCount)}: boot session ${name} started for ${nodes.length} node(s) with template ${session.upgradeTemplateId}`,
  };
}

type BootObserved = { boot: BootSessionStatus | undefined };

function unknownBootSession(progress: { bootSessionName?: string }): SiteServiceError {
  return new SiteServiceError('boot-service', `boot session ${progress.bootSessionName} is not known to the boot service`);
}

/** BOOTING: wait for the boot session to report every node, or for the boot timeout. */
export function decideCheckBoot({ session, progress, observed, now }: StageInput<BootObserved>): StageDecision {
  const { boot } = observed;
  if (!boot) return { progress, waitSeconds: 0, actions: [], error: unknownBootSession(progress) };
  const timedOut = now - progress.stageStartedAt >= session.bootTimeoutSeconds * 1000;
  if (boot.status !== 'complete' && !timedOut) {
    return {
      progress,
      waitSeconds: session.pollIntervalSeconds,
      actions: [],
      siteWait: { recheckSeconds: secondsUntilTimeout(progress.stageStartedAt, session.bootTimeoutSeconds, now), afterBoot: true },
    };
  }
  return {
    progress: enterStage('BOOTED', progress.step, now, {
      bootRequestedAt: progress.bootRequestedAt!,
      bootSessionName: progress.bootSessionName!,
      bootFinishedAt: now,
    }),
    waitSeconds: 0,
    actions: [],
    message:
      boot.status === 'complete'
        ? `${stepHeading(progress.step, session.stepCount)}: boot session ${boot.name} complete`
        : `${stepHeading(progress.step, session.stepCount)}: boot session ${boot.name} did not finish within ${session.bootTimeoutSeconds} s`,
  };
}

/**
 * BOOTED: judge each node by the boot service's own report (CRUS judged the session as a whole):
 * nodes whose boot failed are FAILED with `upgrading-boot-session-failed`, nodes that never
 * reported with `upgrading-time-out-booting`; the rest go on to WLM_WAITING.
 */
export function decideEvaluateBoot({ session, progress, nodes, observed, now }: StageInput<BootObserved & WlmObserved>): StageDecision {
  const { boot } = observed;
  if (!boot) return { progress, waitSeconds: 0, actions: [], error: unknownBootSession(progress) };
  const empty = emptyBootSession(boot);
  if (empty) return { progress, waitSeconds: 0, actions: [], error: empty };
  const booted: NodeRecord[] = [];
  const bootFailed: NodeRecord[] = [];
  const neverReported: NodeRecord[] = [];
  for (const node of nodes) {
    const outcome = boot.error ? 'failed' : boot.nodes[node.name];
    if (outcome === 'succeeded') booted.push(node);
    else if (outcome === 'failed' || outcome === undefined) bootFailed.push(node);
    else neverReported.push(node);
  }
  const actions = [
    ...failNodes(session, bootFailed, FailureReason.bootFailed, observed.wlm),
    ...failNodes(session, neverReported, FailureReason.bootTimeout, observed.wlm),
    ...recordNodes(booted, { status: 'IN_PROGRESS', phase: 'BOOTED' }),
  ];
  const failedNames = names([...bootFailed, ...neverReported]);
  const message =
    `${stepHeading(progress.step, session.stepCount)}: ${booted.length} node(s) booted` +
    (failedNames.length > 0 ? `, ${failedNames.length} failed to boot: ${shortList(failedNames)}` : '') +
    (boot.error ? ` (boot session error: ${boot.error})` : '');
  if (booted.length === 0) return nextStep(progress.step, now, actions, message);
  return {
    progress: enterStage('WLM_WAITING', progress.step, now, {
      bootRequestedAt: progress.bootRequestedAt!,
      bootSessionName: progress.bootSessionName!,
      bootFinishedAt: progress.bootFinishedAt ?? now,
    }),
    waitSeconds: 0,
    actions,
    message,
  };
}

/**
 * WLM_WAITING: resume each node that is really back (rebooted, responding, idle) and, with
 * `healthCheck.command`, whose health check passed, and count it upgraded; a node whose check failed
 * (or gave no result within its timeout) is FAILED with `upgrading-health-check-failed`; past the
 * return timeout, fail the nodes still not back with `upgrading-time-out-wlm-waiting`. Only our drain
 * is lifted: a node an admin drained for another reason is upgraded and stays drained.
 */
export function decideReturnToService({
  session,
  progress,
  nodes,
  observed,
  now,
}: StageInput<WlmObserved & { checks?: ReadonlyMap<string, HealthCheckResult> }>): StageDecision {
  const back: NodeRecord[] = [];
  const toCheck: NodeRecord[] = [];
  const checking: NodeRecord[] = [];
  const notBack: NodeRecord[] = [];
  const unhealthy: { node: NodeRecord; detail: string }[] = [];
  for (const node of nodes) {
    const verdict = returnVerdict(session, node, observed.wlm.get(node.name), progress.bootRequestedAt!, observed.checks?.get(node.name), now);
    if (verdict.kind === 'back') back.push(node);
    else if (verdict.kind === 'check') toCheck.push(node);
    else if (verdict.kind === 'failed') unhealthy.push({ node, detail: verdict.detail });
    else (verdict.checking ? checking : notBack).push(node);
  }
  const command = healthCheckCommand(session);
  const actions: NodeAction[] = [
    ...returnToService(names(back), observed.wlm),
    ...recordNodes(back, { status: 'UPGRADED', phase: 'DONE' }),
    ...releaseLocks(back),
    ...(toCheck.length > 0 && command ? [startChecks(toCheck, command, now)] : []),
    ...failNodes(
      session,
      unhealthy.map((u) => u.node),
      FailureReason.healthCheckFailed,
      observed.wlm,
    ),
  ];

  const parts = [
    ...(back.length > 0 ? [`${back.length} node(s) back in service: ${shortList(names(back))}`] : []),
    ...(toCheck.length > 0 ? [`health check started on ${toCheck.length} node(s): ${shortList(names(toCheck))}`] : []),
    ...[unrestoredReasons(names(back), observed.wlm)].filter((text) => text !== undefined),
    ...(unhealthy.length > 0
      ? [`${unhealthy.length} node(s) failed their health check: ${describeHealthFailures(unhealthy.map((u) => ({ name: u.node.name, detail: u.detail })))}`]
      : []),
  ];
  const backMessage = parts.length > 0 ? `${stepHeading(progress.step, session.stepCount)}: ${parts.join('; ')}` : undefined;
  if (notBack.length === 0 && checking.length === 0 && toCheck.length === 0) return nextStep(progress.step, now, actions, backMessage);

  const since = progress.bootFinishedAt ?? progress.stageStartedAt;
  if (notBack.length === 0 || now - since < session.wlmReturnTimeoutSeconds * 1000) {
    const siteWait = returnSiteWait(session, { notBack, checking, startingChecks: toCheck.length > 0 }, since, now);
    return { progress, waitSeconds: session.pollIntervalSeconds, actions, siteWait, ...(backMessage ? { message: backMessage } : {}) };
  }
  const timedOut = `${notBack.length} node(s) did not return within ${session.wlmReturnTimeoutSeconds} s: ${shortList(names(notBack))}`;
  const failActions = [...actions, ...failNodes(session, notBack, FailureReason.wlmTimeout, observed.wlm)];
  const message = backMessage ? `${backMessage}; ${timedOut}` : `${stepHeading(progress.step, session.stepCount)}: ${timedOut}`;
  // Nodes still being checked finish their check before the step ends.
  if (checking.length > 0 || toCheck.length > 0) {
    const siteWait = returnSiteWait(session, { notBack: [], checking, startingChecks: toCheck.length > 0 }, since, now);
    return { progress, waitSeconds: session.pollIntervalSeconds, actions: failActions, siteWait, message };
  }
  return nextStep(progress.step, now, failActions, message);
}

/**
 * WLM_WAITING's wait for the site: for the nodes not back (their `up`, after their boot) and for the health checks
 * in flight or starting now, whose end is their command's (`commandEnd`: a site event only where the command
 * transport notifies it), never past the first timeout: the return's, each check's own.
 */
function returnSiteWait(
  session: UpgradeSession,
  { notBack, checking, startingChecks }: { notBack: readonly NodeRecord[]; checking: readonly NodeRecord[]; startingChecks: boolean },
  since: number,
  now: number,
): SiteWait {
  const timeout = healthCheckCommand(session)?.timeoutSeconds;
  const deadlines = [
    ...(notBack.length > 0 ? [since + session.wlmReturnTimeoutSeconds * 1000] : []),
    ...checking.flatMap((node) => checkTimesOutAt(session, node) ?? []),
    ...(startingChecks && timeout !== undefined ? [now + timeout * 1000] : []),
  ];
  const commandEnd = checking.length > 0 || startingChecks;
  return {
    ...(deadlines.length > 0 ? { recheckSeconds: secondsUntilTimeout(Math.min(...deadlines), 0, now) } : {}),
    ...(notBack.length > 0 ? { afterBoot: true } : {}),
    ...(commandEnd ? { commandEnd } : {}),
  };
}
