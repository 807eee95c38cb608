/**
 * Typed errors of the domain. Each sets `name` (Step Functions matches Retry/Catch on it)
 * and carries what an operator needs to act on it.
 */

export interface FieldProblem {
  /** Dotted path of the offending field, e.g. `upgradeStepSize` or `nodes[3].wlm.state`. */
  field: string;
  message: string;
}

/** Bad input: nothing has been touched. Maps to CRUS's 422 and the CLI's exit status 2. */
export class InvalidInputError extends Error {
  override name = 'InvalidInputError';
  constructor(
    /** What was being read: "upgrade request", "site file examples/site.yaml", ... */
    readonly subject: string,
    readonly problems: FieldProblem[],
  ) {
    super(`Invalid ${subject}: ${problems.map((p) => (p.field ? `${p.field}: ${p.message}` : p.message)).join('; ')}`);
  }
}

/** A site service (workload manager, boot service, inventory) failed or answered unexpectedly. Retryable. */
export class SiteServiceError extends Error {
  override name = 'SiteServiceError';
  constructor(
    readonly service: 'workload-manager' | 'boot-service' | 'inventory' | 'provisioner',
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(`${service}: ${message}`, options);
  }
}

/** A node group named by label does not exist in the inventory. Retryable: the operator may create it. */
export class GroupNotFoundError extends Error {
  override name = 'GroupNotFoundError';
  constructor(readonly label: string) {
    super(`failed to obtain Node Group named '${label}'`);
  }
}

/** A session id that the store does not know. */
export class SessionNotFoundError extends Error {
  override name = 'SessionNotFoundError';
  constructor(readonly upgradeId: string) {
    super(`no session with id '${upgradeId}'`);
  }
}

/**
 * The session's progress moved on under us (a retried or duplicate invocation).
 * The handler that meets it re-reads the session instead of acting twice.
 */
export class StaleProgressError extends Error {
  override name = 'StaleProgressError';
  constructor(readonly upgradeId: string, readonly expected: string) {
    super(`session ${upgradeId} is no longer at ${expected}`);
  }
}

/** Cancel asked of a session that has already ended. */
export class SessionNotCancellableError extends Error {
  override name = 'SessionNotCancellableError';
  constructor(readonly upgradeId: string, readonly state: string) {
    super(`session ${upgradeId} is ${state} and cannot be cancelled`);
  }
}

export function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
