import { SessionNotFoundError } from '../core/errors';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';
import { rolloutCommand, type InvocationOptions } from './command-hints';

/**
 * An id that names no run of this control plane (a typo, another data directory): bad input, exit 2,
 * pointing to the command that lists the ids there, with the options the user gave to reach it.
 * `what` says what was looked for (`no deployment with id 'x'`); by default any session.
 */
export function unknownIdError(id: string, options: InvocationOptions, what = new SessionNotFoundError(id).message): CliError {
  return new CliError(`${what} (see '${rolloutCommand(['session', 'list'], options)}')`, ExitCode.invalidInput);
}
