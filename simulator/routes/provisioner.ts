import { z } from 'zod';
import { PROVISION_ACTIONS } from '../models/provisioner';
import type { SiteSimulator } from '../site-simulator';
import { SimRequestError } from '../errors';
import { ok, readBody, type ServiceApi } from './route';

const actionSchema = z.object({
  name: z.string({ error: 'name is required' }).trim().min(1, 'name must not be empty'),
  action: z.enum(PROVISION_ACTIONS, { error: `action must be one of ${PROVISION_ACTIONS.join(', ')}` }),
  nodes: z.array(z.string(), { error: 'nodes must be a list of node names' }),
});

/** The provisioner's task API: start a prepare or deploy action, then poll it (records go out as they are). */
export function provisionerApi(sim: SiteSimulator): ServiceApi {
  const provisioner = sim.provisioner;
  return {
    service: 'provisioner',
    prefix: /^\/provisioner\//,
    errorBody: (_status, message) => ({ detail: message }),
    routes: [
      {
        method: 'POST',
        path: /^\/provisioner\/v1\/actions$/,
        handle: (_params, body) => ok(provisioner.startAction(readBody(actionSchema, body)), 201),
      },
      {
        method: 'GET',
        path: /^\/provisioner\/v1\/actions\/([^/]+)$/,
        handle: ([name]) => {
          const action = provisioner.getAction(name!);
          if (!action) throw new SimRequestError(404, `action '${name}' does not exist`);
          return ok(action);
        },
      },
    ],
  };
}
