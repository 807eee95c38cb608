import { SessionNotFoundError } from '../core/errors';
import type { TargetOptions } from './control-plane-target';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';
import { targetArgs } from './run-control';

/**
 * An id that names no run of this control plane (a typo, another data directory): bad input, exit 2,
 * pointing to the command that lists the ids there, with the options the user gave to reach it.
 * `what` says what was looked for (`no deployment with id 'x'`); by default any session.
 */
export function unknownIdError(id: string, options: TargetOptions & { dataDir?: string }, what = new SessionNotFoundError(id).message): CliError {
  const where = targetArgs(options);
  return new CliError(`${what} (see 'rollout session list${where ? ` ${where}` : ''}')`, ExitCode.invalidInput);
}
