import type { ApiHandler, ApiRequest, ApiResponse } from './http';
import { problem, problemFor } from './problems';

export const METHODS = ['GET', 'POST', 'DELETE'] as const;
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

/** Dispatches on path then method: an unknown path is a 404, a known path with another method a 405 naming the allowed ones. */
export function createRouter(routes: readonly Route[]): ApiHandler {
  return async (request) => {
    for (const route of routes) {
      const params = match(route.pattern, request.path);
      if (!params) continue;
      const allowed = Object.keys(route.methods).join(', ');
      const handler = route.methods[request.method.toUpperCase() as Method];
      if (!handler) return problem(405, `${request.method} is not allowed on ${route.pattern}; allowed: ${allowed}`, undefined, { allow: allowed });
      try {
        return await handler(params, request);
      } catch (err) {
        return problemFor(err, route.invalidStatus);
      }
    }
    return problem(404, `no resource at ${request.path}`);
  };
}
