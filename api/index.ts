import type { ApiDependencies } from './dependencies';
import { environmentRoutes } from './environments';
import { json, type ApiHandler } from './http';
import type { buildOpenApiDocument } from './openapi';
import { createRouter, type Route } from './router';
import { sessionRoutes } from './sessions';
import { siteEventRoutes } from './site-events';
import { taskRunRoutes } from './task-runs';

export type { ApiDependencies } from './dependencies';
export type { ApiControlPlane } from '../control-plane/control-plane';
export type { ApiHandler, ApiRequest, ApiResponse } from './http';

/** Every route of the API, in one table (the OpenAPI test checks the document lists each). */
export function apiRoutes(dependencies: ApiDependencies): Route[] {
  let document: ReturnType<typeof buildOpenApiDocument> | undefined;
  return [
    ...sessionRoutes(dependencies),
    ...taskRunRoutes(dependencies),
    ...environmentRoutes(dependencies),
    ...siteEventRoutes(dependencies),
    {
      pattern: '/openapi.json',
      invalidStatus: 400,
      // Loaded on first use: the generator is not worth its load time to a CLI process or a cold Lambda that never serves it.
      methods: { GET: async () => json(200, (document ??= (await import('./openapi')).buildOpenApiDocument())) },
    },
  ];
}

/** The API as one transport-free handler: served by `rollout serve` (node-http.ts) and by the API Gateway Lambda. */
export function createApi(dependencies: ApiDependencies): ApiHandler {
  return createRouter(apiRoutes(dependencies));
}
