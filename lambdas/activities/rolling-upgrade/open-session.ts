import { z } from 'zod';
import { InvalidInputError, SessionNotFoundError } from '../../../core/errors';
import { parseOrThrow } from '../../../core/validation';
import { MAX_SESSION_ID_LENGTH, idForExecution } from '../../../core/execution-id';
import { checkUpgradeRequest } from '../../../control-plane/request-checks/upgrade-request';
import { resumeCarriesOn, resumedMessage, sessionControlOf, type CancelRequested, type StopRequested } from '../../../core/session-control';
import { resumedProgress } from '../../../core/rolling-upgrade/stop-decisions';
import { stepText } from '../../../core/rolling-upgrade/step-plan';
import { recordRefusal } from '../run-starts';
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

/** `{resumeUpgradeId}` alone: a continuation that also carries request fields (or a non-string id) is refused, not silently resumed. */
const continuationSchema = z.strictObject({
  resumeUpgradeId: z
    .string({ error: 'resumeUpgradeId must be a session id (a string)' })
    .min(1, 'resumeUpgradeId must not be empty')
    .max(MAX_SESSION_ID_LENGTH, `resumeUpgradeId must be at most ${MAX_SESSION_ID_LENGTH} characters`),
  generation: z
    .number({ error: 'generation must be a whole number' })
    .int('generation must be a whole number')
    .min(0, 'generation must not be negative')
    .optional(),
  /** Step Functions links a child execution to its parent with it (continue-as-new). */
  AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID: z.string().optional(),
});

function isContinuation(input: unknown): boolean {
  return typeof input === 'object' && input !== null && 'resumeUpgradeId' in input;
}

/** The session id of an execution: a retried Open Session finds the session it already made. */
export const upgradeIdFor = idForExecution;

/**
 * Starts or resumes a session. A new request is validated in full (CRUS's 422 cases, and the boot
 * template must exist) before anything is written, so bad input touches no node. `{cancelUpgradeId}`
 * only writes a cancel request (core/session-control.ts).
 */
export async function openSession(event: OpenSessionEvent, deps: RollingUpgradeDependencies): Promise<WorkflowState | CancelRequested | StopRequested> {
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

  // The console's cancel and stop: write the request the running upgrade picks up, and end this execution.
  const control = sessionControlOf(event.input, 'upgrade', ['cancel', 'stop']);
  if (control?.action === 'cancel') {
    const session = await store.requestCancel(control.id);
    return { cancelRequested: { id: control.id, kind: 'upgrade', state: session.state } };
  }
  if (control?.action === 'stop') {
    const session = await store.requestStop(control.id);
    return { stopRequested: { id: control.id, kind: 'upgrade', state: session.state } };
  }
  if (isContinuation(event.input)) {
    const continuation: ContinuationInput = parseOrThrow(continuationSchema, event.input, 'continuation request');
    let session = await store.getSession(continuation.resumeUpgradeId);
    if (!session) throw new SessionNotFoundError(continuation.resumeUpgradeId);
    if (continuation.generation !== undefined) await store.noteGeneration(session.upgradeId, continuation.generation);
    // A person's resume (the CLI's, the console's: no generation, which continue-as-new always carries) carries the session on:
    // a stop nothing finished is withdrawn, a stopped session reopens (core/session-control.ts).
    if (continuation.generation === undefined && (session.progress.stage === 'STOPPED' || resumeCarriesOn(session.state))) {
      const from = session.state === 'STOPPING' ? 'STOPPING' : 'STOPPED';
      session = await store.reopenStopped(session.upgradeId, resumedProgress(session.progress, clock.now()));
      await store.messages.append(
        session.upgradeId,
        resumedMessage(from, session.progress.stage === 'ROLLING' ? 'the window' : stepText(session.progress.step, session.stepCount)),
      );
    }
    // A person's resume continues as new after the newest generation of the session's earlier chains (their names are taken).
    return pointer(session, continuation.generation ?? session.generation ?? 0);
  }

  const upgradeId = upgradeIdFor(event.executionId);
  let request;
  try {
    request = await checkUpgradeRequest(event.input, site);
  } catch (err) {
    // A retry finds the session it made (the template may be gone since); a new request refused is on record.
    const existing = await store.getSession(upgradeId);
    if (existing) return pointer(existing, 0);
    if (err instanceof InvalidInputError) await recordRefusal(deps.starts, upgradeId, 'upgrade', err, clock.now(), deps.simulatedTime);
    throw err;
  }
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
    ...(deps.simulatedTime ? { simulatedTime: true, wallCreatedAt: new Date().toISOString() } : {}),
    planTaken: false,
    nodeCount: 0,
    stepCount: 0,
    progress: { step: 0, stage: 'STARTING', stageStartedAt: now, errorCount: 0 },
  };
  await store.createSession(session, []);
  const summary = `Upgrade session created: ${request.startingLabel} in steps of ${request.upgradeStepSize}`;
  await store.messages.append(upgradeId, summary);
  await publishStatusEvents(deps, [
    statusEvent(DETAIL_TYPES.sessionStarted, { kind: 'upgrade', sessionId: upgradeId, at: eventTime(now), summary }, 'session'),
  ]);
  return pointer(session, 0);
}
