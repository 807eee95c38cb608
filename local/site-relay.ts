import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { SiteEventKind, SiteEventRequest } from '../core/site/site-event';

/**
 * The site relay (`rollout relay`, issue 29): slurmctld runs it as a strigger program, with the event's nodes as
 * one hostlist for its last argument (trigger_mgr.c _trigger_run_program). It must never hold slurmctld up and
 * a firing must never be lost to a control plane that is away: each firing is first written to a spool directory
 * (a temporary file renamed into place: a reader never sees half of one), then delivered once with a short
 * timeout; a failed delivery leaves the file for `rollout relay drain`, which retries with backoff. Each file
 * carries the firing's id, so a firing delivered twice (an answer lost after the control plane recorded it)
 * changes nothing there (POST /site-events is idempotent by id). The same delivery goes to `rollout serve`
 * (plain HTTP) or to the deployed stack's API (signed with SigV4 by a `sign` the caller gives: its IAM auth).
 */

/** A firing as spooled: its file and the body POST /site-events takes. */
export interface SpooledFiring {
  file: string;
  body: SiteEventRequest & { nodes: string };
}

/** What one delivery came to: acknowledged, refused for good (a 4xx: retrying cannot help), or to retry. */
export type DeliveryOutcome = { delivered: true; duplicate: boolean } | { rejected: string } | { retry: string };

/** How long the one delivery of `relay deliver` may take: slurmctld waits on nothing, but the program should end soon. */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 2000;
/** Where refused firings are moved, inside the spool: kept for an admin to read, never retried. */
export const REJECTED_FOLDER = 'rejected';
export const FIRING_SUFFIX = '.json';
export const TEMPORARY_SUFFIX = '.tmp';
/** The hex digits of the hash in a firing's id. */
export const FIRING_HASH_DIGITS = 32;
/** The digits of a firing file name's epoch ms, zero-padded. */
export const FIRING_TIME_DIGITS = 15;
/** A temporary file older than this is a writer's that died before its rename (a write takes milliseconds). */
export const STALE_TEMPORARY_MS = 10 * 60 * 1000;

/** A firing as the relay is told of it: slurmctld's event and hostlist, the session whose trigger fired (its --session), and when. */
export interface Firing {
  event: SiteEventKind;
  hostlist: string;
  session?: string;
  firedAt: Date;
}

/**
 * The id of a firing: its event, then a hash of the event, the hostlist, when it fired and the session whose
 * trigger it was (left out of the hash when none was given). The same firing spooled twice has one id and one
 * file; two firings of the same nodes at different instants have two, and so have two sessions' triggers firing
 * for the same nodes in the same pass. The relay script (site-relay-script.ts) computes the same with sha256sum.
 */
export function firingId(event: SiteEventKind, hostlist: string, firedAt: string, session?: string): string {
  const hashed = `${event}\n${hostlist}\n${firedAt}${session === undefined ? '' : `\n${session}`}`;
  return `${event}-${createHash('sha256').update(hashed).digest('hex').slice(0, FIRING_HASH_DIGITS)}`;
}

/** The file name: the firing's epoch ms (zero-padded, so the names sort oldest first), then its id. */
function firingFileName(firedAt: string, id: string): string {
  return `${String(Date.parse(firedAt)).padStart(FIRING_TIME_DIGITS, '0')}-${id}${FIRING_SUFFIX}`;
}

/**
 * Writes a firing to the spool, atomically: the whole file, under a temporary name, renamed into place (over a
 * file of the same name: the same firing, the same bytes). Returns the spooled firing.
 */
export async function spoolFiring(spool: string, firing: Firing): Promise<SpooledFiring> {
  const firedAt = firing.firedAt.toISOString();
  const id = firingId(firing.event, firing.hostlist, firedAt, firing.session);
  const body = { id, event: firing.event, nodes: firing.hostlist, ...(firing.session === undefined ? {} : { session: firing.session }), firedAt };
  const file = path.join(spool, firingFileName(firedAt, id));
  await mkdir(spool, { recursive: true });
  const temporary = path.join(spool, `.${path.basename(file)}.${process.pid}${TEMPORARY_SUFFIX}`);
  // Flushed before the rename: after a crash of the host the name holds the whole firing or is not there.
  const handle = await open(temporary, 'wx');
  try {
    await handle.writeFile(`${JSON.stringify(body)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, file);
  return { file, body };
}

/** The firings waiting in the spool, oldest first. A file that is not a firing (cut short by hand, say) is reported, not sent. */
export async function spooledFirings(spool: string, onUnreadable: (file: string, why: string) => void = () => {}): Promise<SpooledFiring[]> {
  let names: string[];
  try {
    names = await readdir(spool);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const firings: SpooledFiring[] = [];
  for (const name of names.filter((n) => n.endsWith(FIRING_SUFFIX) && !n.startsWith('.')).sort()) {
    const file = path.join(spool, name);
    try {
      const body = JSON.parse(await readFile(file, 'utf8')) as SpooledFiring['body'];
      if (typeof body?.id !== 'string' || typeof body.event !== 'string' || typeof body.nodes !== 'string' || typeof body.firedAt !== 'string')
        throw new Error('not a firing: it needs id, event, nodes and firedAt');
      if (body.session !== undefined && typeof body.session !== 'string') throw new Error('not a firing: its session must be a string');
      firings.push({ file, body });
    } catch (err) {
      onUnreadable(file, err instanceof Error ? err.message : String(err));
    }
  }
  return firings;
}

/** A delivery as it is sent: what a `DeliverySigner` signs. */
export interface DeliveryRequest {
  method: 'POST';
  url: URL;
  headers: Record<string, string>;
  body: string;
}

/**
 * Signs a delivery: the headers to send instead of the request's own (SigV4 for the stack's API, whose
 * every method requires IAM auth). Resolving the credentials is part of it, so it may reach the network
 * (an AssumeRole of the relay's role): it runs within the delivery's timeout, and a failure is a retry.
 */
export type DeliverySigner = (request: DeliveryRequest) => Promise<Record<string, string>>;

/**
 * The route under the API's base URL, its path kept: the stack's ApiUrl ends with its stage (`.../v1/`), which
 * `new URL('/site-events', base)` would drop.
 */
export function siteEventsUrl(endpoint: string): URL {
  const base = new URL(endpoint);
  if (!base.pathname.endsWith('/')) base.pathname = `${base.pathname}/`;
  return new URL('site-events', base);
}

/**
 * 408 and 429 ask for a retry; so does 403, which only API Gateway's IAM auth answers (our routes never do):
 * a credential expired, a clock skewed, a role not yet allowed. It says who sent the firing, not what it is:
 * once the credential is fixed the same firing goes through, so it stays spooled. Any other 4xx says the
 * firing itself is wrong, now and later.
 */
function isRefusal(status: number): boolean {
  return status >= 400 && status < 500 && status !== 403 && status !== 408 && status !== 429;
}

/** API Gateway's `message` (or a problem's `detail`) of a refusal, if the answer carries one. */
function answerMessage(text: string): string | undefined {
  try {
    const { message, detail } = JSON.parse(text) as { message?: unknown; detail?: unknown };
    const said = message ?? detail;
    return typeof said === 'string' ? said.slice(0, 500) : undefined;
  } catch {
    return undefined;
  }
}

/** One POST /site-events of a firing, signed when `sign` is given, all within `timeoutMs`. Never throws: a failure is an outcome. */
export async function deliverFiring(endpoint: string, firing: SpooledFiring['body'], timeoutMs: number, sign?: DeliverySigner): Promise<DeliveryOutcome> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const request: DeliveryRequest = {
      method: 'POST',
      url: siteEventsUrl(endpoint),
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(firing),
    };
    const headers = sign ? await untilAborted(sign(request), signal).catch((err: unknown) => Promise.reject(signingFailure(err))) : request.headers;
    const response = await fetch(request.url, { method: request.method, headers, body: request.body, signal });
    const text = await response.text();
    if (response.ok) return { delivered: true, duplicate: response.status === 200 };
    if (isRefusal(response.status)) return { rejected: `HTTP ${response.status}: ${text.slice(0, 500)}` };
    const message = answerMessage(text);
    return { retry: `HTTP ${response.status}${message === undefined ? '' : `: ${message}`}` };
  } catch (err) {
    return { retry: failureReason(err, timeoutMs) };
  }
}

/**
 * A signer's failure (no credentials, a refused AssumeRole) said as such; its timeout left as it is. Only its
 * line is kept (failureReason would say a cause's message instead): it becomes the retry's reason.
 */
function signingFailure(err: unknown): unknown {
  if (typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'TimeoutError') return err;
  return new Error(`cannot sign the delivery: ${err instanceof Error ? err.message : String(err)}`);
}

/** `work`, or the signal's reason once it aborts first (a credential chain stuck on a far endpoint). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/**
 * Why a fetch failed, in a line: its timeout, or the socket's error (`connect ECONNREFUSED 127.0.0.1:8084`), not
 * fetch's own `fetch failed`. Read by shape: fetch's errors come from Node's realm, not always this one's Error.
 */
function failureReason(err: unknown, timeoutMs: number): string {
  const { name, message, cause } = (typeof err === 'object' && err !== null ? err : {}) as { name?: string; message?: string; cause?: { message?: string } };
  if (name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  return cause?.message ?? message ?? String(err);
}

/** Delivers a spooled firing and settles its file: removed once acknowledged, moved aside when refused, kept otherwise. */
export async function deliverSpooled(endpoint: string, firing: SpooledFiring, timeoutMs: number, sign?: DeliverySigner): Promise<DeliveryOutcome> {
  const outcome = await deliverFiring(endpoint, firing.body, timeoutMs, sign);
  if ('delivered' in outcome) await rm(firing.file, { force: true });
  else if ('rejected' in outcome) await moveToRejected(firing.file);
  return outcome;
}

/** Moves a spooled file the control plane will never take (refused, or not a firing) to the spool's rejected/ folder; returns its new path. */
export async function moveToRejected(file: string): Promise<string> {
  const rejected = path.join(path.dirname(file), REJECTED_FOLDER);
  await mkdir(rejected, { recursive: true });
  const moved = path.join(rejected, path.basename(file));
  await rename(file, moved);
  return moved;
}

export interface RelayDeliverOptions {
  spool: string;
  event: SiteEventKind;
  hostlist: string;
  /** The session whose trigger fired (the program's --session): carried in the body, and part of the id. */
  session?: string;
  /** The REST API (`rollout serve`'s, or the stack's ApiUrl); without it the firing is only spooled (a `relay drain` delivers it). */
  endpoint?: string;
  /** Signs each delivery (the stack's API: SigV4); unsigned without it. */
  sign?: DeliverySigner;
  timeoutMs?: number;
  now?: () => Date;
}

/** What slurmctld's program does: spool the firing, try one delivery. Resolves within the timeout after the write. */
export async function relayDeliver(options: RelayDeliverOptions): Promise<{ firing: SpooledFiring; outcome?: DeliveryOutcome }> {
  const firing = await spoolFiring(options.spool, {
    event: options.event,
    hostlist: options.hostlist,
    ...(options.session === undefined ? {} : { session: options.session }),
    firedAt: (options.now ?? (() => new Date()))(),
  });
  if (options.endpoint === undefined) return { firing };
  return { firing, outcome: await deliverSpooled(options.endpoint, firing, options.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS, options.sign) };
}

export interface DrainOptions {
  spool: string;
  endpoint: string;
  /** Signs each delivery (the stack's API: SigV4); unsigned without it. */
  sign?: DeliverySigner;
  /** Passes over the spool at most (the first included); a firing still there after them stays spooled. */
  maxAttempts: number;
  /** The wait after the first failed pass; doubled after each, up to maxDelayMs. */
  initialDelayMs: number;
  maxDelayMs: number;
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /** Told of each delivery, refusal and failed pass (the CLI prints them). */
  report?: (line: string) => void;
}

export interface DrainResult {
  delivered: number;
  duplicates: number;
  rejected: number;
  /** Firings still spooled: the control plane did not acknowledge them within the attempts. */
  remaining: number;
  attempts: number;
}

/** Removes the temporary files of writers that died before their rename (never a firing: those were not spooled); returns them. */
export async function removeStaleTemporaries(spool: string, now: number): Promise<string[]> {
  const names = await readdir(spool).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? [] : Promise.reject(err)));
  const removed: string[] = [];
  for (const name of names.filter((n) => n.startsWith('.') && n.endsWith(TEMPORARY_SUFFIX))) {
    const file = path.join(spool, name);
    const info = await stat(file).catch(() => undefined);
    if (info && now - info.mtimeMs > STALE_TEMPORARY_MS) {
      await rm(file, { force: true });
      removed.push(file);
    }
  }
  return removed;
}

/** The wait before pass `attempt` (counted from 2): initialDelayMs doubled per failed pass, at most maxDelayMs. */
export function backoffDelayMs(attempt: number, initialDelayMs: number, maxDelayMs: number): number {
  return Math.min(maxDelayMs, initialDelayMs * 2 ** Math.max(0, attempt - 2));
}

/**
 * Retries the spooled firings, oldest first, until each was acknowledged (its file removed) or refused, or
 * `maxAttempts` passes went by. A pass stops at the first firing that fails to deliver (the control plane is
 * away: the others would fail too), then waits with exponential backoff.
 */
export async function drainSpool(options: DrainOptions): Promise<DrainResult> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const report = options.report ?? (() => {});
  const result: DrainResult = { delivered: 0, duplicates: 0, rejected: 0, remaining: 0, attempts: 0 };
  for (const file of await removeStaleTemporaries(options.spool, Date.now())) report(`${file}: removed, a write cut short (never renamed into place)`);
  for (let attempt = 1; attempt <= options.maxAttempts; attempt++) {
    if (attempt > 1) await sleep(backoffDelayMs(attempt, options.initialDelayMs, options.maxDelayMs));
    result.attempts = attempt;
    const firings = await spooledFirings(options.spool, (file, why) => report(`${file}: left in the spool, not sent: ${why}`));
    let failed: string | undefined;
    for (const firing of firings) {
      const outcome = await deliverSpooled(options.endpoint, firing, options.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS, options.sign);
      if ('delivered' in outcome) {
        result.delivered++;
        if (outcome.duplicate) result.duplicates++;
        report(`${firing.body.id} (${firing.body.event} ${firing.body.nodes}): delivered${outcome.duplicate ? ' (recorded before)' : ''}`);
      } else if ('rejected' in outcome) {
        result.rejected++;
        report(`${firing.body.id}: refused, moved to ${REJECTED_FOLDER}/: ${outcome.rejected}`);
      } else {
        failed = outcome.retry;
        break;
      }
    }
    if (failed === undefined) return { ...result, remaining: 0 };
    report(`pass ${attempt} of ${options.maxAttempts}: ${failed}`);
  }
  result.remaining = (await spooledFirings(options.spool)).length;
  return result;
}
