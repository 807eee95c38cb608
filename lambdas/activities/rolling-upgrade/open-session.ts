import { InvalidInputError, SessionNotFoundError } from '../../../core/errors';
import { idForExecution } from '../../../core/execution-id';
import { parseUpgradeRequest, unsupportedControls } from '../../../core/rolling-upgrade/upgrade-request';
import type { UpgradeSession, WorkflowState } from '../../../core/rolling-upgrade/session';
import { DETAIL_TYPES, statusEvent } from '../../../core/events/status-events';
import { eventTime, publishStatusEvents } from '../status-events';
import type { RollingUpgradeDependencies } from './dependencies';

/** What the workflow hands Open Session: the execution's input and its id. */
export interface OpenSessionEvent {
  input: unknown;
  executionId: string;
}

/** Input of an execution that carries on a session (continue-as-new, or a resume after a crash). */
export interface ContinuationInput {
  resumeUpgradeId: string;
  generation?: number;
}

function isContinuation(input: unknown): input is ContinuationInput {
  return typeof input === 'object' && input !== null && 'resumeUpgradeId' in input;
}

/** The session id of an execution: a retried Open Session finds the session it already made. */
export const upgradeIdFor = idForExecution;

/**
 * Starts or resumes a session. A new request is validated in full (CRUS's 422 cases, and the boot
 * template must exist) before anything is written, so bad input touches no node.
 */
export async function openSession(event: OpenSessionEvent, deps: RollingUpgradeDependencies): Promise<WorkflowState> {
  const { store, site, clock, settings } = deps;
  const pointer = (session: UpgradeSession, generation: number): WorkflowState => ({
    upgradeId: session.upgradeId,
    stage: session.progress.stage,
    step: session.progress.step,
    waitSeconds: 0,
    iteration: 0,
    iterationLimit: settings.iterationsPerExecution,
    generation,
  });

  if (isContinuation(event.input)) {
    const session = await store.getSession(event.input.resumeUpgradeId);
    if (!session) throw new SessionNotFoundError(event.input.resumeUpgradeId);
    return pointer(session, event.input.generation ?? 0);
  }

  const request = parseUpgradeRequest(event.input);
  const unsupported = unsupportedControls(request);
  if (unsupported.length > 0) throw new InvalidInputError('upgrade request', unsupported);
  if (request.healthCheck?.command !== undefined && !site.commands) {
    throw new InvalidInputError('upgrade request', [
      { field: 'healthCheck.command', message: "the site has no command transport to run it on (a site profile's `transport`: ssm or local)" },
    ]);
  }
  if (!(await site.bootService.templateExists(request.upgradeTemplateId))) {
    throw new InvalidInputError('upgrade request', [
      { field: 'upgradeTemplateId', message: `boot template '${request.upgradeTemplateId}' does not exist` },
    ]);
  }
  const upgradeId = upgradeIdFor(event.executionId);
  const existing = await store.getSession(upgradeId);
  if (existing) return pointer(existing, 0);

  const now = clock.now();
  const session: UpgradeSession = {
    ...request,
    upgradeId,
    kind: 'ComputeUpgradeSession',
    state: 'UPDATING',
    completed: false,
    createdAt: new Date(now).toISOString(),
    planTaken: false,
    nodeCount: 0,
    stepCount: 0,
    progress: { step: 0, stage: 'STARTING', stageStartedAt: now, errorCount: 0 },
  };
  await store.createSession(session, []);
  const summary = `Upgrade session created: ${request.startingLabel} in steps of ${request.upgradeStepSize}`;
  await store.appendMessage(upgradeId, summary);
  await publishStatusEvents(deps, [statusEvent(DETAIL_TYPES.sessionStarted, { kind: 'upgrade', sessionId: upgradeId, at: eventTime(now), summary }, 'session')]);
  return pointer(session, 0);
}
