import { SiteServiceError } from '../core/errors';

/**
 * Runs a check that needs the site, skipped while the site fails: the workflow's first state checks
 * again, and its record says why it stopped. Any other error (the refusal itself) passes.
 */
export async function unlessSiteFails(check: (() => Promise<unknown>) | undefined): Promise<void> {
  try {
    await check?.();
  } catch (err) {
    if (!(err instanceof SiteServiceError)) throw err;
  }
}
