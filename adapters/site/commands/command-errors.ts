import { SiteServiceError } from '../../../core/errors';

/** The transport could not run a command or see it finish (SSM Failed/TimedOut/Cancelled, spawn error, ...). */
export class CommandTransportError extends Error {
  override name = 'CommandTransportError';
  constructor(
    message: string,
    readonly details: {
      transport: 'local' | 'ssm';
      commandId?: string;
      instanceId?: string;
      status?: string;
      stderr?: string /** The transport's own call got no answer in time (not the command's status). */;
      timedOut?: boolean;
    },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** What a connector throws when its command failed: a SiteServiceError (retryable) naming the command and its stderr. */
export function commandFailed(service: SiteServiceError['service'], what: string, detail: string, cause?: unknown): SiteServiceError {
  return new SiteServiceError(service, `${what}: ${detail}`, undefined, cause === undefined ? undefined : { cause });
}
