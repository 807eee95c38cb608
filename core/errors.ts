/**
 * Every typed error of the core. Each sets `name` as a string literal (Step Functions matches
 * Retry/Catch on it, and a minified bundle would rename classes), carries what an operator needs
 * to act on it, and keeps what caused it in `cause`.
 */
import type { DeploymentPhase, DeploymentStage } from './deployment-stages';
import { quotedSessionId } from './execution-id';
import { shortList } from './text';

/** The base of every error this project throws on purpose: callers can tell ours from bugs. */
export abstract class RolloutError extends Error {
  abstract override readonly name: string;
}

export interface FieldProblem {
  /** Dotted path of the offending field, e.g. `upgradeStepSize` or `nodes[3].wlm.state`. */
  field: string;
  message: string;
}

/** Bad input: nothing has been touched. Maps to CRUS's 422 and the CLI's exit status 2. */
export class InvalidInputError extends RolloutError {
  override readonly name = 'InvalidInputError';
  constructor(
    /** What was being read: "upgrade request", "site file examples/site.yaml", ... */
    readonly subject: string,
    readonly problems: FieldProblem[],
    options?: ErrorOptions,
  ) {
    super(`Invalid ${subject}: ${problems.map((p) => (p.field ? `${p.field}: ${p.message}` : p.message)).join('; ')}`, options);
  }
}

/** `head-node`: the commands task-graph tasks run on the nodes through the head node. */
export type SiteService = 'workload-manager' | 'boot-service' | 'inventory' | 'provisioner' | 'head-node';

/** A site service (workload manager, boot service, inventory, provisioner) failed or answered unexpectedly. Retryable. */
export class SiteServiceError extends RolloutError {
  override readonly name = 'SiteServiceError';
  constructor(
    readonly service: SiteService,
    message: string,
    readonly status?: number,
    options?: ErrorOptions,
  ) {
    super(`${service}: ${message}`, options);
  }
}

/** A node group named by label does not exist in the inventory. Retryable: the operator may create it. */
export class GroupNotFoundError extends RolloutError {
  override readonly name = 'GroupNotFoundError';
  constructor(readonly label: string) {
    super(`failed to obtain Node Group named '${label}'`);
  }
}

/**
 * HSM refused to add a node to a group because the node is in another group of the same exclusive
 * group (Cray-HPE/hms-smd cmd/smd/smd-api.go doGroupMembersPost: 409, ErrHMSDSExclusiveGroup). Not
 * "already a member": the node is not in the group. Retryable: the operator may move the node.
 */
export class ExclusiveGroupConflictError extends RolloutError {
  override readonly name = 'ExclusiveGroupConflictError';
  constructor(
    readonly label: string,
    readonly node: string,
    /** The group of the same exclusive group that holds the node, when it could be found. */
    readonly otherGroup: string | undefined,
    readonly exclusiveGroup: string | undefined,
  ) {
    super(
      `inventory: HSM refused to add ${node} to group '${label}': it is a member of ` +
        (otherGroup ? `group '${otherGroup}'` : 'another group') +
        (exclusiveGroup ? ` of the exclusive group '${exclusiveGroup}'` : ' of the same exclusive group') +
        ' (remove it there first, or use a group outside that exclusive group)',
    );
  }
}

/** Nodes a site service does not know: the plan names them, the service does not. Retryable (the site may be fixed). */
export class UnknownNodesError extends RolloutError {
  override readonly name = 'UnknownNodesError';
  constructor(
    readonly service: SiteService,
    readonly nodes: readonly string[],
  ) {
    super(`nodes unknown to the ${service}: ${shortList(nodes)}`);
  }
}

/**
 * A boot session that would act upon no node: its limit is an empty list, or a group with no
 * members. The control plane's fault (or the inventory's), never the nodes': nothing is booted and
 * no node is failed for it. Retryable (the group may be filled, the inventory fixed).
 */
export class EmptyBootSessionError extends RolloutError {
  override readonly name = 'EmptyBootSessionError';
  constructor(
    readonly service: SiteService,
    /** The boot session's name, as the run chose it. */
    readonly session: string,
    /** Why no node is left, naming the limit: `group 'upgrading' has no members`. */
    readonly why: string,
  ) {
    super(`${service}: boot session ${session} would reboot no node: ${why}; nothing was booted`);
  }
}

/** A rolling-upgrade session id that the store does not know. */
export class SessionNotFoundError extends RolloutError {
  override readonly name = 'SessionNotFoundError';
  constructor(readonly upgradeId: string) {
    super(`no session with id ${quotedSessionId(upgradeId)}`);
  }
}

/** A group-deployment id that the store does not know (or whose plan is missing). */
export class DeploymentNotFoundError extends RolloutError {
  override readonly name = 'DeploymentNotFoundError';
  constructor(
    readonly deploymentId: string,
    detail = 'no deployment with that id',
  ) {
    super(`deployment ${quotedSessionId(deploymentId)}: ${detail}`);
  }
}

/** A task-run id that the store does not know (or whose plan or chunks are missing). */
export class TaskRunNotFoundError extends RolloutError {
  override readonly name = 'TaskRunNotFoundError';
  constructor(
    readonly runId: string,
    detail = 'no task run with that id',
  ) {
    super(`task run ${quotedSessionId(runId)}: ${detail}`);
  }
}

/**
 * A conditional write lost: the record moved on under us (a retried or duplicated invocation, or
 * a concurrent writer). The caller re-reads instead of acting twice.
 */
export class StaleWriteError extends RolloutError {
  override readonly name = 'StaleWriteError';
  constructor(
    /** What was written: "session <id> progress", "deployment <id> run state", ... */
    readonly record: string,
    /** The version or position the write expected. */
    readonly expected: string,
    options?: ErrorOptions,
  ) {
    super(`${record} is no longer at ${expected}`, options);
  }
}

/** Cancel asked of a session that has already ended. */
export class SessionNotCancellableError extends RolloutError {
  override readonly name = 'SessionNotCancellableError';
  constructor(
    readonly upgradeId: string,
    readonly state: string,
  ) {
    super(`session ${upgradeId} is ${state} and cannot be cancelled`);
  }
}

/** Stop asked of a session that is not running (ended, stopped already, being deleted). */
export class SessionNotStoppableError extends RolloutError {
  override readonly name = 'SessionNotStoppableError';
  constructor(
    readonly id: string,
    readonly state: string,
  ) {
    super(`session ${id} is ${state} and cannot be stopped`);
  }
}

/**
 * A person's resume of a run that an execution still runs: a second execution would work on the same
 * nodes beside the first (a second control plane over them), so nothing is started. `state` is the
 * run's stored status; the message says how to stop it, or (STOPPING) to resume it once it has stopped.
 */
export class SessionStillRunningError extends RolloutError {
  override readonly name = 'SessionStillRunningError';
  constructor(
    readonly kind: 'upgrade' | 'deployment' | 'tasks',
    readonly id: string,
    readonly state: string,
  ) {
    const noun = kind === 'tasks' ? 'task run' : kind;
    const quoted = quotedSessionId(id);
    super(
      state === 'STOPPING'
        ? `${noun} ${quoted} is still running (STOPPING): its execution is finishing the stop; nothing was resumed. Resume it once it is STOPPED (rollout session watch ${quoted} follows it)`
        : `${noun} ${quoted} is still running (${state}): an execution works on it, and a resume would start a second one; nothing was resumed. To stop it: rollout session stop ${quoted}, then resume it once it is STOPPED`,
    );
  }
}

/** Pause, approve or unpause asked of a session that cannot take it (not a window, ended, not waiting for approval). */
export class SessionGateError extends RolloutError {
  override readonly name = 'SessionGateError';
  constructor(
    readonly upgradeId: string,
    readonly action: 'pause' | 'approve' | 'unpause',
    readonly why: string,
  ) {
    super(`cannot ${action} session ${upgradeId}: ${why}`);
  }
}

/**
 * The workflow was about to park on a task token for the operator, but the gate opened first (an
 * approval, an unpause or a cancel landed in between): the workflow looks again at once.
 */
export class OperatorGateOpenError extends RolloutError {
  override readonly name = 'OperatorGateOpen';
  constructor(readonly upgradeId: string) {
    super(`session ${upgradeId} no longer waits for its operator`);
  }
}

/**
 * The workflow was about to park for the site's events, but a firing for its session was delivered since its last
 * increment read the site (or the session is no longer UPDATING): the workflow looks again at once.
 */
export class SiteEventArrivedError extends RolloutError {
  override readonly name = 'SiteEventArrived';
  constructor(readonly upgradeId: string) {
    super(`session ${upgradeId}: a site event arrived since it last looked (or it no longer runs)`);
  }
}

/** A group or node asked to move between stages in a way the stage rules forbid. A bug or a replayed result. */
export class IllegalStageTransitionError extends RolloutError {
  override readonly name = 'IllegalStageTransitionError';
  constructor(
    /** "group ntp-node", "node n01", ... */
    readonly subject: string,
    readonly from: DeploymentStage,
    readonly to: DeploymentStage,
  ) {
    super(`${subject} cannot move from ${from} to ${to}`);
  }
}

/** A group name that the deployment plan does not contain. */
export class UnknownDeploymentGroupError extends RolloutError {
  override readonly name = 'UnknownDeploymentGroupError';
  constructor(readonly group: string) {
    super(`no deployment group named '${group}'`);
  }
}

/** A phase result for a group that is not waiting for that phase (not ready, or already past it). */
export class UnexpectedPhaseResultError extends RolloutError {
  override readonly name = 'UnexpectedPhaseResultError';
  constructor(
    readonly group: string,
    readonly phase: DeploymentPhase,
    readonly stage: DeploymentStage,
    reason: string,
  ) {
    super(`group ${group} (${stage}) cannot take a ${phase} result: ${reason}`);
  }
}

/** An outcome for a scheduled operation that is not in TRANSITION (unknown, not started, or already ended): a replayed result. */
export class UnexpectedOutcomeError extends RolloutError {
  override readonly name = 'UnexpectedOutcomeError';
  constructor(
    readonly operation: string,
    readonly state: string | undefined,
  ) {
    super(state === undefined ? `no operation ${operation}` : `operation ${operation} is ${state}, not in TRANSITION`);
  }
}

/** A final result asked for while groups can still be processed. */
export class DeploymentRunNotFinishedError extends RolloutError {
  override readonly name = 'DeploymentRunNotFinishedError';
  constructor(readonly pendingGroups: readonly string[]) {
    super(`the deployment has groups left to process: ${pendingGroups.join(', ')}`);
  }
}

/** A dependency graph that should have been validated as acyclic has a cycle: a bug upstream. */
export class DependencyCycleError extends RolloutError {
  override readonly name = 'DependencyCycleError';
  constructor(readonly members: readonly string[]) {
    super(`dependency cycle among: ${members.join(', ')}`);
  }
}

/**
 * The session lost the lock of nodes it was working on (its lease ran out and another session took
 * them over, or a newer holder's fencing token replaced its own): it must not act on them any more.
 */
export class LockLostError extends RolloutError {
  override readonly name = 'LockLostError';
  constructor(
    readonly owner: string,
    /** Each lost node, with the session that holds it now (undefined: nobody). */
    readonly lost: ReadonlyMap<string, string | undefined>,
  ) {
    super(`session ${owner} no longer holds the lock of ${shortList([...lost.keys()])}`);
  }
}

/**
 * The site shows nodes claimed by a run of another control plane (another store: their Slurm reason
 * names a run this store does not know). They are left alone, never touched: reported
 * `held-by-another-control-plane`.
 */
export class ClaimedElsewhereError extends RolloutError {
  override readonly name = 'ClaimedElsewhereError';
  constructor(
    readonly owner: string,
    /** Each claimed node, with the run the site says claims it. */
    readonly claims: ReadonlyMap<string, string>,
  ) {
    super(`${shortList([...claims.keys()])} claimed at the site by run ${[...new Set(claims.values())].join(', ')} of another control plane`);
  }
}

/** An environment, release or node of the environments (Fuel's clusters) that the store does not know. Maps to 404. */
export class EnvironmentResourceNotFoundError extends RolloutError {
  override readonly name = 'EnvironmentResourceNotFoundError';
  constructor(
    readonly resource: 'environment' | 'release' | 'node',
    /** As asked: a path segment that is not an id stays text. */
    readonly id: number | string,
    /** The request field that named it (`release_id`, `node_id`), or undefined for the URL's id. */
    readonly field?: string,
  ) {
    super(`no ${resource} with id ${JSON.stringify(id)}`);
  }
}

/**
 * An upgrade-seed operation the environments' upgrade relation forbids: cloning an environment that
 * already has a seed or is one, assigning a node that is not in the seed's original. Maps to Fuel's 405.
 */
export class UpgradeNotAllowedError extends RolloutError {
  override readonly name = 'UpgradeNotAllowedError';
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/**
 * An upgrade-seed operation that conflicts with the target release: an attribute set in the original
 * that the release removes with no rename, a node role the release does not define. Maps to Fuel's 409.
 */
export class UpgradeConflictError extends RolloutError {
  override readonly name = 'UpgradeConflictError';
  constructor(
    readonly subject: string,
    readonly problems: FieldProblem[],
  ) {
    super(`${subject}: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`);
  }
}

/** A record asked to be created that exists with other content, or that takes what another holds (a node, an id). Maps to 409. */
export class ResourceConflictError extends RolloutError {
  override readonly name = 'ResourceConflictError';
  constructor(
    readonly subject: string,
    readonly problems: FieldProblem[],
  ) {
    super(`${subject}: ${problems.map((p) => (p.field ? `${p.field}: ${p.message}` : p.message)).join('; ')}`);
  }
}

export function describeError(err: unknown): string {
  // Not `instanceof Error`: Node's own errors come from another realm under jest and in vm contexts.
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(err);
}
