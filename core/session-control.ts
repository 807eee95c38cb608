import { z } from 'zod';
import { MAX_SESSION_ID_LENGTH, idForExecution } from './execution-id';
import { parseOrThrow } from './validation';

/**
 * Execution inputs that act on an existing session instead of starting one, so that the Step
 * Functions console (Start execution on the same state machine) can reach them:
 * `{"cancelUpgradeId": ID}` / `{"cancelDeploymentId": ID}` / `{"cancelRunId": ID}` write the cancel request and end;
 * `{"stopUpgradeId": ID}` / `{"stopDeploymentId": ID}` / `{"stopRunId": ID}` write the stop request and end;
 * `{"resumeDeploymentId": ID}` carries a deployment on from the store. (An upgrade's
 * `{"resumeUpgradeId"}` and a task run's `{"resumeRunId"}` are their continue-as-new inputs too:
 * Open Session and Open Task Run read them themselves.)
 */
export const SESSION_CONTROL_KEYS = {
  upgrade: { cancel: 'cancelUpgradeId', resume: 'resumeUpgradeId', stop: 'stopUpgradeId' },
  deployment: { cancel: 'cancelDeploymentId', resume: 'resumeDeploymentId', stop: 'stopDeploymentId' },
  tasks: { cancel: 'cancelRunId', resume: 'resumeRunId', stop: 'stopRunId' },
} as const;

export type SessionControlKind = keyof typeof SESSION_CONTROL_KEYS;
export type SessionControlAction = 'cancel' | 'resume' | 'stop';

/** What each control input does, in the words of docs/reference/requests.md (generated from this by `npm run docs:generate`). */
export const SESSION_CONTROL_MEANINGS: Record<SessionControlAction, string> = {
  cancel:
    'Writes the cancel request and ends at once, its output `{"cancelRequested": {id, kind, state}}`: an upgrade applies the CRUS deletion rules at its next increment (state DELETING); a deployment or task run starts nothing more, lets what runs finish and ends CANCELLED (state CANCELLING)',
  stop: 'Writes the stop request and ends at once, its output `{"stopRequested": {id, kind, state}}`: what is in flight finishes, nothing new starts, the run ends STOPPED (state STOPPING) and a resume carries it on',
  resume: 'Carries on, from the store, a run whose execution died or a STOPPED one (for an upgrade and a task run, also their continue-as-new input)',
};

export interface SessionControl {
  action: SessionControlAction;
  id: string;
}

/**
 * A person's resume (`rollout session resume`, the console's resume input; never continue-as-new) asks
 * the run to carry on, and one resume does, for an upgrade, a deployment and a task run alike: a stop not
 * finished (STOPPING: asked of a run whose process died, or the process died while it stopped) is
 * withdrawn, and a STOPPED run reopens. Either way the run carries on from where it is. (A stop that
 * only a resume could finish used to need a second resume: the first one ended the run STOPPED.)
 */
export const RESUME_CARRIES_ON = ['STOPPING', 'STOPPED'] as const;

/** Whether a person's resume of a run in `status` withdraws its stop or reopens it (RESUME_CARRIES_ON). */
export function resumeCarriesOn(status: string): status is (typeof RESUME_CARRIES_ON)[number] {
  return (RESUME_CARRIES_ON as readonly string[]).includes(status);
}

/** What the run says when a person's resume carries it on from `status` (`where`: where it carries on, if it says). */
export function resumedMessage(status: (typeof RESUME_CARRIES_ON)[number], where?: string): string {
  const at = where ? ` at ${where}` : '';
  return status === 'STOPPING' ? `Stop withdrawn by a resume: carrying on${at}` : `Resumed${at} after a stop`;
}

/** What a cancel input's execution returns: the request written, and the session's state after it. */
export interface CancelRequested {
  cancelRequested: { id: string; kind: SessionControlKind; state: string };
}

/** What a stop input's execution returns (`{"stopUpgradeId"}`, `{"stopDeploymentId"}`, `{"stopRunId"}`): the request written, and the state after it. */
export interface StopRequested {
  stopRequested: { id: string; kind: SessionControlKind; state: string };
}

/**
 * The control an input asks for, or undefined for an ordinary request. An input naming a control
 * key must be exactly `{key: id}` (a Step Functions start may add its own
 * AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID): anything else is refused naming the field.
 */
export function sessionControlOf(input: unknown, kind: SessionControlKind, actions: readonly SessionControlAction[]): SessionControl | undefined {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined;
  const keysOf: Partial<Record<SessionControlAction, string>> = SESSION_CONTROL_KEYS[kind];
  const keys = actions.flatMap((action) => keysOf[action] ?? []);
  const named = keys.filter((key) => key in input);
  if (named.length === 0) return undefined;
  const id = z
    .string({ error: 'must be a session id (a string)' })
    .min(1, 'must not be empty')
    .max(MAX_SESSION_ID_LENGTH, `must be at most ${MAX_SESSION_ID_LENGTH} characters`);
  const shape = Object.fromEntries(keys.map((key) => [key, id.optional()]));
  const parsed = parseOrThrow(
    z
      .strictObject({ ...shape, AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID: z.string().optional() })
      .refine(() => named.length === 1, { message: `give one of ${keys.join(', ')}`, path: [named[1] ?? ''] }),
    input,
    `${kind} control input`,
  ) as Record<string, string | undefined>;
  const action = actions.find((candidate) => keysOf[candidate] === named[0])!;
  return { action, id: parsed[named[0]!]! };
}

/**
 * Whether an execution works on the session: the one that created it (the id derives from its ARN),
 * one named after it (continue-as-new `<id>-g<n>`, a CLI resume `<id>-resume-...`), or one whose
 * input resumes it (a console start; pass the input to check that).
 */
export function executionRunsSession(
  kind: SessionControlKind,
  id: string,
  execution: { executionArn: string; name?: string | undefined },
  input?: unknown,
): boolean {
  if (idForExecution(execution.executionArn) === id || execution.name?.startsWith(`${id}-`)) return true;
  return typeof input === 'object' && input !== null && (input as Record<string, unknown>)[SESSION_CONTROL_KEYS[kind].resume] === id;
}
