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
