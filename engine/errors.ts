import { RolloutError } from '../core/errors';

/** The data directory is owned by another live process for longer than the caller would wait. */
export class DataDirInUseError extends RolloutError {
  override readonly name = 'DataDirInUseError';
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`data directory ${dataDir} is in use by process ${pid}`);
  }
}

/** A cancel request for a session kind that has no cancel (today: group deployments). */
export class CancelNotSupportedError extends RolloutError {
  override readonly name = 'CancelNotSupportedError';
  constructor(
    readonly id: string,
    readonly kind: 'deployment',
  ) {
    super(
      `${kind} ${id} cannot be cancelled: group deployments have no cancel request yet ` +
        '(the workflow runs each group to its end); stopping the rollout process that runs it leaves the groups where they are',
    );
  }
}
