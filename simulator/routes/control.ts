import { SimClock } from '../../time/sim-clock';
import { siteStateContract } from '../site-state-file';
import type { SiteSimulator } from '../site-simulator';
import { z } from 'zod';
import { ok, readBody, type ServiceApi } from './route';

const gatesSchema = z.strictObject({ alive: z.boolean().optional(), available: z.boolean().optional() });

/**
 * The simulator's own API: simulated time, the `--site-state-out` document, the whole state tests judge a
 * run by, and a node's inventory gates set mid-run (`POST /sim/nodes/NAME/gates {alive?, available?}`).
 */
export function controlApi(sim: SiteSimulator): ServiceApi {
  return {
    prefix: /^\/sim\//,
    errorBody: (_status, message) => ({ detail: message }),
    routes: [
      {
        method: 'GET',
        path: /^\/sim\/time$/,
        handle: () => ok({ now: sim.clock.now(), ...(sim.clock instanceof SimClock ? { timeScale: sim.clock.timeScale } : {}) }),
      },
      { method: 'GET', path: /^\/sim\/state$/, handle: () => ok(siteStateContract(sim.state())) },
      { method: 'GET', path: /^\/sim\/full-state$/, handle: () => ok(sim.state()) },
      {
        method: 'POST',
        path: /^\/sim\/nodes\/([^/]+)\/gates$/,
        handle: ([name], body) => ok(sim.inventory.setGates(decodeURIComponent(name!), readBody(gatesSchema, body))),
      },
    ],
  };
}
