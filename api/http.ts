/**
 * The API's requests and responses, free of any transport: the Node HTTP adapter (`rollout serve`)
 * and the API Gateway Lambda translate to and from these, so the handlers are built once.
 */
export interface ApiRequest {
  method: string;
  /** The path without query string, e.g. `/environments/4/upgrade/clone`. */
  path: string;
  /** The raw body text; undefined when the request has none. */
  body?: string | undefined;
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  /** Serialised as JSON; undefined for no body. */
  body?: unknown;
}

export type ApiHandler = (request: ApiRequest) => Promise<ApiResponse>;

export const JSON_TYPE = 'application/json';
export const PROBLEM_TYPE = 'application/problem+json';

export function json(status: number, body: unknown, headers: Record<string, string> = {}): ApiResponse {
  return { status, headers: { 'content-type': JSON_TYPE, ...headers }, body };
}
