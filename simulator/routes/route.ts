import type { z } from 'zod';
import { toFieldProblems } from '../../core/validation';
import type { SiteServiceName } from '../site-file';
import { SimRequestError } from '../errors';

export type Method = 'GET' | 'POST' | 'DELETE';

export interface SimResponse {
  status: number;
  body: unknown;
  /** Default application/json. */
  contentType?: string;
}

export interface Route {
  method: Method;
  /** Anchored pattern; its capture groups (URL-decoded) are the handler's params. */
  path: RegExp;
  handle(params: string[], body: unknown, query: URLSearchParams): SimResponse;
}

/** One simulated service: the paths it owns, how it words errors, its routes. */
export interface ServiceApi {
  /** The service `apiFaults` name; absent for the control API, which is never faulted. */
  service?: SiteServiceName;
  prefix: RegExp;
  /** The error body the real service would send. */
  errorBody(status: number, message: string): unknown;
  routes: Route[];
}

export const ok = (body: unknown, status = 200): SimResponse => ({ status, body });

/** RFC 7807 problem details, as BOS and HSM answer errors. */
export const problem = (status: number, detail: string) => ({ type: 'about:blank', title: titleOf(status), status, detail });

/** Validates a request body, answering 400 with every bad field. */
export function readBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const detail = toFieldProblems(result.error)
    .map((p) => (p.field ? `${p.field}: ${p.message}` : p.message))
    .join('; ');
  throw new SimRequestError(400, `invalid request body: ${detail}`);
}

function titleOf(status: number): string {
  const titles: Record<number, string> = {
    400: 'Bad Request',
    404: 'Not Found',
    405: 'Method Not Allowed',
    409: 'Conflict',
    500: 'Internal Server Error',
    503: 'Service Unavailable',
  };
  return titles[status] ?? 'Error';
}
