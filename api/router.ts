import { MAX_SESSION_ID_LENGTH } from '../core/execution-id';
import { isJsonContentType, JSON_TYPE, type ApiHandler, type ApiRequest, type ApiResponse } from './http';
import { problem, problemFor } from './problems';

export const METHODS = ['GET', 'POST', 'DELETE'] as const;

/** Bodies above this are refused (413): every request of the API is small JSON. Both transports check it. */
export const MAX_BODY_BYTES = 1024 * 1024;
/**
 * No id in a path is longer (session, deployment and environment ids alike): one that is cannot name
 * anything, and is refused (404 naming the limit) before any lookup, which DynamoDB would refuse as an
 * error for a key over 2,048 bytes.
 */
export const MAX_PATH_ID_LENGTH = MAX_SESSION_ID_LENGTH;
export type Method = (typeof METHODS)[number];

export type RouteHandler = (params: Record<string, string>, request: ApiRequest) => Promise<ApiResponse>;

export interface Route {
  /** `/sessions/{id}`: `{name}` segments become params. */
  pattern: string;
  /** The status bad input maps to on this route: CRUS's 422 for sessions, Fuel's 400 for environments. */
  invalidStatus: 400 | 422;
  methods: Partial<Record<Method, RouteHandler>>;
}

function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const got = path.replace(/\/+$/, '').split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const segment = want[i]!;
    const value = got[i]!;
    if (segment.startsWith('{') && segment.endsWith('}')) {
      if (value === '') return undefined;
      try {
        params[segment.slice(1, -1)] = decodeURIComponent(value);
      } catch {
        return undefined;
      }
    } else if (segment !== value) return undefined;
  }
  return params;
}

/**
 * Dispatches on path then method: an unknown path is a 404, a known path with another method a 405
 * naming the allowed ones. HEAD is GET without the body (RFC 9110) wherever GET is served; a body
 * over MAX_BODY_BYTES is a 413 before any route reads it, one that is not JSON a 415, and an id over
 * MAX_PATH_ID_LENGTH a 404 before any lookup.
 */
export function createRouter(routes: readonly Route[]): ApiHandler {
  return async (request) => {
    if (request.body !== undefined && Buffer.byteLength(request.body) > MAX_BODY_BYTES) {
      return problem(413, `the body is over ${MAX_BODY_BYTES} bytes: every request of this API is small JSON`);
    }
    const method = request.method.toUpperCase();
    for (const route of routes) {
      const params = match(route.pattern, request.path);
      if (!params) continue;
      const served = Object.keys(route.methods);
      const allowed = [...served, ...(route.methods.GET ? ['HEAD'] : [])].join(', ');
      const head = method === 'HEAD' && route.methods.GET !== undefined;
      const handler = route.methods[(head ? 'GET' : method) as Method];
      if (!handler) return problem(405, `${request.method} is not allowed on ${route.pattern}; allowed: ${allowed}`, undefined, { allow: allowed });
      const overLong = Object.values(params).find((value) => value.length > MAX_PATH_ID_LENGTH);
      if (overLong !== undefined) {
        return problem(404, `no resource at ${route.pattern}: an id is at most ${MAX_PATH_ID_LENGTH} characters, this one has ${overLong.length}`);
      }
      if (request.body !== undefined && request.body !== '' && !isJsonContentType(request.contentType)) {
        const sent = request.contentType === undefined ? 'no Content-Type' : `Content-Type ${request.contentType}`;
        return problem(415, `the body must be ${JSON_TYPE} (UTF-8); the request has ${sent}`, undefined, { 'accept-post': JSON_TYPE });
      }
      let response: ApiResponse;
      try {
        response = await handler(params, request);
      } catch (err) {
        response = problemFor(err, route.invalidStatus);
      }
      return head ? withoutBody(response) : response;
    }
    return problem(404, `no resource at ${request.path}`);
  };
}

/** HEAD's answer: GET's status and headers, its length announced, no body. */
function withoutBody(response: ApiResponse): ApiResponse {
  const length = response.body === undefined ? 0 : Buffer.byteLength(JSON.stringify(response.body));
  return { status: response.status, headers: { ...response.headers, 'content-length': String(length) } };
}
