import { RolloutError } from '../core/errors';

/** The data directory is owned by another live process for longer than the caller would wait. */
export class DataDirInUseError extends RolloutError {
  override readonly name = 'DataDirInUseError';
  constructor(
    readonly dataDir: string,
    /** Undefined when the owner did not announce itself (its database's lock says it is there). */
    readonly pid?: number,
  ) {
    super(`data directory ${dataDir} is in use by ${pid === undefined ? 'another process' : `process ${pid}`}`);
  }
}

/**
 * A data directory whose files are damaged (a claim file that is not one, a database that does
 * not open or lost its table): named with what is wrong and what to do, instead of a hang or a
 * crash deep in the database. The CLI's exit status 2: the directory given cannot be used as it is.
 */
export class DataDirDamagedError extends RolloutError {
  override readonly name = 'DataDirDamagedError';
  constructor(
    readonly dataDir: string,
    readonly problem: string,
    readonly remedy: string,
    options?: ErrorOptions,
  ) {
    super(`data directory ${dataDir} is damaged: ${problem}; ${remedy}`, options);
  }
}

/** A `rollout serve` (or LocalStack) that does not answer, or is not one. */
export class ControlPlaneUnreachableError extends RolloutError {
  override readonly name = 'ControlPlaneUnreachableError';
  constructor(
    readonly url: string,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(`cannot reach a rollout control plane at ${url}: ${detail}`, options);
  }
}
