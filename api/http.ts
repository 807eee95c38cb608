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
  /** The Content-Type header as sent; a body must be JSON (isJsonContentType). */
  contentType?: string | undefined;
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

/**
 * Whether a Content-Type names JSON in UTF-8: `application/json`, with no parameter but a UTF-8
 * `charset` (RFC 8259 JSON is UTF-8; the bodies are read as UTF-8 only). Anything else is a 415.
 */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const [type, ...parameters] = contentType.split(';').map((part) => part.trim().toLowerCase());
  if (type !== JSON_TYPE) return false;
  return parameters.every((parameter) => parameter === '' || /^charset="?utf-8"?$/.test(parameter));
}
