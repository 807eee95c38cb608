import type { z } from 'zod';
import { InvalidInputError, SiteServiceError, describeError } from '../../core/errors';
import { inProcessEndpoint, sendInProcess } from './in-process-endpoints';
import { tokenSource, type Token, type TokenSource } from './secret-token';

export type SiteServiceName = SiteServiceError['service'];
export type HttpMethod = 'GET' | 'POST' | 'DELETE';

export const DEFAULT_TIMEOUT_MS = 10_000;

export interface HttpJsonClientOptions {
  service: SiteServiceName;
  baseUrl: string;
  /** Per request, body included. Default 10 s. */
  timeoutMs?: number;
  /** Sent with every request, e.g. Slurm's X-SLURM-USER-NAME. */
  headers?: Record<string, string>;
  /** Sent as `Authorization: Bearer <token>`. */
  bearerToken?: Token;
  /** A token sent in a header of its own, e.g. Slurm's X-SLURM-USER-TOKEN. */
  tokenHeader?: { name: string; token: Token };
}

export interface JsonResponse {
  /** `GET http://host/path`: names the request in error messages. */
  request: string;
  status: number;
  body: unknown;
}

/**
 * Builds a path whose interpolated values are URL-encoded: path`/node/${name}`. encodeURIComponent
 * leaves `.` and `..` as they are and fetch resolves them (`/v2/sessiontemplates/..` is `/v2/`),
 * and an empty value names the collection: all three are refused, never sent.
 */
export function urlPath(strings: TemplateStringsArray, ...values: string[]): string {
  for (const value of values) {
    if (value === '' || value === '.' || value === '..') {
      throw new InvalidInputError('URL path segment', [
        { field: 'path', message: `${JSON.stringify(value)} would not name one resource in ${strings.join('{}')}` },
      ]);
    }
  }
  return strings.reduce((out, s, i) => out + s + (i < values.length ? encodeURIComponent(values[i]!) : ''), '');
}

/**
 * JSON over HTTP for one site service. Network errors, timeouts, bad JSON and any status that is
 * neither 2xx nor one the caller accepts become SiteServiceError naming the request.
 */
export class HttpJsonClient {
  readonly service: SiteServiceName;
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly headers: Record<string, string>;
  private readonly auth?: { name: string; prefix: string; source: TokenSource };

  constructor({ service, baseUrl, timeoutMs = DEFAULT_TIMEOUT_MS, headers = {}, bearerToken, tokenHeader }: HttpJsonClientOptions) {
    this.service = service;
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.timeoutMs = timeoutMs;
    this.headers = { accept: 'application/json', ...headers };
    if (bearerToken) this.auth = { name: 'authorization', prefix: 'Bearer ', source: tokenSource(bearerToken) };
    else if (tokenHeader?.token) this.auth = { name: tokenHeader.name, prefix: '', source: tokenSource(tokenHeader.token) };
  }

  /** Sends one request; `accept` lists the non-2xx statuses the caller handles itself (e.g. 404, 409). */
  async request(method: HttpMethod, path: string, options: { body?: unknown; accept?: readonly number[] } = {}): Promise<JsonResponse> {
    const url = this.baseUrl + path;
    const request = `${method} ${url}`;
    const attempt = async () => {
      // The token first, outside the request: a secret that cannot be read is that error (naming its field), not the site's.
      const auth = this.auth ? { [this.auth.name]: `${this.auth.prefix}${await this.auth.source.current()}` } : {};
      try {
        return await this.send(method, url, options.body, auth);
      } catch (err) {
        // A DOMException, which is not always `instanceof Error` (e.g. across jest realms): match the name.
        const timedOut = (err as { name?: unknown } | null)?.name === 'TimeoutError';
        // fetch's own message is just "fetch failed"; the cause says why (ECONNREFUSED, ...).
        const why = timedOut ? `timed out after ${this.timeoutMs} ms` : `failed: ${describeError((err as { cause?: unknown }).cause ?? err)}`;
        throw new SiteServiceError(this.service, `${request} ${why}`, undefined, { cause: err });
      }
    };
    let { status, text } = await attempt();
    // A token refused may have been rotated: read it afresh and try once more.
    if (status === 401 && this.auth?.source.refused()) ({ status, text } = await attempt());

    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch (err) {
      if (status >= 200 && status < 300) throw new SiteServiceError(this.service, `${request} answered ${status} with invalid JSON`, status, { cause: err });
      body = text;
    }
    const accepted = (status >= 200 && status < 300) || (options.accept ?? []).includes(status);
    if (!accepted) throw new SiteServiceError(this.service, `${request} answered ${status}: ${errorDetail(body)}`, status);
    return { request, status, body };
  }

  private async send(method: HttpMethod, url: string, body: unknown, auth: Record<string, string>): Promise<{ status: number; text: string }> {
    const base = { ...this.headers, ...auth };
    const headers = body === undefined ? base : { ...base, 'content-type': 'application/json' };
    const text = body === undefined ? undefined : JSON.stringify(body);
    // A service of this very process (the embedded runtime's simulator) answers without the loopback round trip.
    const local = inProcessEndpoint(url);
    if (local) return sendInProcess(local, method, headers, text, this.timeoutMs);
    const res = await fetch(url, { method, headers, body: text, signal: AbortSignal.timeout(this.timeoutMs) });
    return { status: res.status, text: await res.text() };
  }

  /**
   * Creates a named resource with a POST, or reads it back when the name is taken (409): a retry
   * of our own create, so the existing resource is the answer. `what` names it in the error when
   * it cannot be read back.
   */
  async createOrRead<T>(
    path: string,
    body: { name: string } & Record<string, unknown>,
    what: string,
    read: (name: string) => Promise<T | undefined>,
    toResult: (response: JsonResponse) => T | Promise<T>,
  ): Promise<T> {
    const response = await this.request('POST', path, { body, accept: [409] });
    if (response.status !== 409) return toResult(response);
    const existing = await read(body.name);
    if (existing === undefined) throw new SiteServiceError(this.service, `${response.request} answered 409 but ${what} '${body.name}' cannot be read`, 409);
    return existing;
  }

  /** The body in the expected shape, or a SiteServiceError saying which request answered what. */
  parse<S extends z.ZodType>(schema: S, response: JsonResponse): z.output<S> {
    const result = schema.safeParse(response.body);
    if (result.success) return result.data;
    const issue = result.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    throw new SiteServiceError(this.service, `${response.request} answered an unexpected body${where}: ${issue?.message ?? 'invalid'}`, response.status);
  }
}

/** The service's own words: slurmrestd's errors[], or RFC 7807 detail/title, or the raw text. */
function errorDetail(body: unknown): string {
  if (typeof body === 'string') return body.slice(0, 200) || '(empty body)';
  if (body && typeof body === 'object') {
    const b = body as { detail?: unknown; title?: unknown; errors?: { error?: unknown; description?: unknown }[] };
    const slurm = Array.isArray(b.errors) ? b.errors[0] : undefined;
    const detail = b.detail ?? slurm?.error ?? slurm?.description ?? b.title;
    if (typeof detail === 'string' && detail) return detail;
    return JSON.stringify(body).slice(0, 200);
  }
  return '(empty body)';
}
