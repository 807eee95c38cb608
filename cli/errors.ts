import { RolloutError } from '../core/errors';

/** An error the CLI reports as one line and an exit status, without a stack trace. */
export class CliError extends RolloutError {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}
