import type { SiteSimulator } from '../site-simulator';
import { ok, type ServiceApi } from './route';

/** The simulator's own API: simulated time and the state dump tests judge a run by. */
export function controlApi(sim: SiteSimulator): ServiceApi {
  return {
    prefix: /^\/sim\//,
    errorBody: (_status, message) => ({ detail: message }),
    routes: [
      { method: 'GET', path: /^\/sim\/time$/, handle: () => ok({ now: sim.clock.now() }) },
      { method: 'GET', path: /^\/sim\/state$/, handle: () => ok(sim.state()) },
    ],
  };
}
