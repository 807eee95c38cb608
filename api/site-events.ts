import { takeSiteEvent } from '../control-plane/site-event-intake';
import { siteEventNodes, siteEventSchema } from '../core/site/site-event';
import { parseOrThrow } from '../core/validation';
import type { SiteEventStore } from '../ports/site-event-store';
import type { ApiDependencies } from './dependencies';
import { json } from './http';
import { problem, readJsonObject } from './problems';
import type { Route, RouteHandler } from './router';

/**
 * The site's trigger firings, as `rollout relay` delivers them (issue 29): POST records one, idempotent by its
 * id (201 the first time, 200 `duplicate` after: nothing changes); a new one for a session wakes its workflow
 * parked for the site (takeSiteEvent). GET lists them.
 */
export function siteEventRoutes({ siteEvents, controlPlane }: ApiDependencies): Route[] {
  return [{ pattern: '/site-events', invalidStatus: 422, methods: { GET: listSiteEvents(siteEvents), POST: recordSiteEvent(siteEvents, controlPlane) } }];
}

const NO_STORE = 'this API keeps no site events (it was built without a site-event store)';

function recordSiteEvent(store: SiteEventStore | undefined, controlPlane: ApiDependencies['controlPlane']): RouteHandler {
  return async (_params, request) => {
    const body = parseOrThrow(siteEventSchema, readJsonObject(request.body), 'site event');
    const nodes = siteEventNodes(body.nodes);
    if (!store) return problem(503, NO_STORE);
    const event = {
      id: body.id,
      event: body.event,
      nodes,
      ...(body.session ? { session: body.session } : {}),
      firedAt: body.firedAt,
      receivedAt: new Date().toISOString(),
    };
    const { recorded, woke } = await takeSiteEvent(event, { siteEvents: store, controlPlane });
    return json(recorded ? 201 : 200, { id: event.id, recorded, duplicate: !recorded, woke });
  };
}

function listSiteEvents(store: SiteEventStore | undefined): RouteHandler {
  return async () => (store ? json(200, await store.list()) : problem(503, NO_STORE));
}
