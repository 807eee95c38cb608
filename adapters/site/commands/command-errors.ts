import { SiteServiceError } from '../../../core/errors';

/** What a connector throws when its command failed: a SiteServiceError (retryable) naming the command and its stderr. */
export function commandFailed(service: SiteServiceError['service'], what: string, detail: string, cause?: unknown): SiteServiceError {
  return new SiteServiceError(service, `${what}: ${detail}`, undefined, cause === undefined ? undefined : { cause });
}
