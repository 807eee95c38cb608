import { SimClock } from '../sim-clock';
import { siteStateContract } from '../site-state-file';
import type { SiteSimulator } from '../site-simulator';
import { ok, type ServiceApi } from './route';

/** The simulator's own API: simulated time, the `--site-state-out` document, and the whole state tests judge a run by. */
export function controlApi(sim: SiteSimulator): ServiceApi {
  return {
    prefix: /^\/sim\//,
    errorBody: (_status, message) => ({ detail: message }),
    routes: [
      { method: 'GET', path: /^\/sim\/time$/, handle: () => ok({ now: sim.clock.now(), ...(sim.clock instanceof SimClock ? { timeScale: sim.clock.timeScale } : {}) }) },
      { method: 'GET', path: /^\/sim\/state$/, handle: () => ok(siteStateContract(sim.state())) },
      { method: 'GET', path: /^\/sim\/full-state$/, handle: () => ok(sim.state()) },
    ],
  };
}
