import { z } from 'zod';
import type { WlmNodeSnapshot } from '../models/workload-manager';
import type { SiteSimulator } from '../site-simulator';
import { SimRequestError } from '../errors';
import { ok, readBody, type ServiceApi } from './route';

const updateSchema = z.object({
  state: z.array(z.string()).length(1, 'state must hold exactly one of DRAIN, RESUME, FAIL'),
  reason: z.string().optional(),
});

/** slurmrestd, any v0.0.4x: node listing and `scontrol update` through POST /node/{name}. */
export function slurmApi(sim: SiteSimulator): ServiceApi {
  const wlm = sim.workloadManager;
  return {
    service: 'workload-manager',
    prefix: /^\/slurm\//,
    errorBody: (_status, message) => ({ errors: [{ error: message, description: message }], warnings: [] }),
    routes: [
      {
        method: 'GET',
        path: /^\/slurm\/v0\.0\.4\d\/nodes$/,
        handle: () => ok({ nodes: wlm.list().map(toSlurmNode), errors: [], warnings: [] }),
      },
      {
        method: 'GET',
        path: /^\/slurm\/v0\.0\.4\d\/node\/([^/]+)$/,
        handle: ([name]) => {
          const node = wlm.get(name!);
          if (!node) throw new SimRequestError(404, `Invalid node name specified: ${name}`);
          return ok({ nodes: [toSlurmNode(node)], errors: [], warnings: [] });
        },
      },
      {
        method: 'POST',
        path: /^\/slurm\/v0\.0\.4\d\/node\/([^/]+)$/,
        handle: ([name], body) => {
          const { state, reason } = readBody(updateSchema, body);
          const wanted = state[0]!.toUpperCase();
          // slurmctld refuses DRAIN and FAIL without a reason.
          if ((wanted === 'DRAIN' || wanted === 'FAIL') && !reason?.trim()) throw new SimRequestError(400, `a reason is required to set ${wanted}`);
          if (wanted === 'DRAIN') wlm.drain(name!, reason!);
          else if (wanted === 'FAIL') wlm.fail(name!, reason!);
          else if (wanted === 'RESUME') wlm.resume(name!);
          else throw new SimRequestError(400, `unsupported node state '${state[0]}': use DRAIN, RESUME or FAIL`);
          return ok({ errors: [], warnings: [] });
        },
      },
    ],
  };
}

function toSlurmNode(node: WlmNodeSnapshot) {
  return {
    name: node.name,
    state: [node.base, ...node.flags],
    reason: node.reason ?? '',
    boot_time: { set: node.bootTime !== undefined, infinite: false, number: node.bootTime === undefined ? 0 : Math.floor(node.bootTime / 1000) },
  };
}
