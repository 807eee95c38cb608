import { z } from 'zod';
import { expandHostlist } from '../../core/site/hostlist';
import type { WlmNodeSnapshot } from '../models/workload-manager';
import type { SiteSimulator } from '../site-simulator';
import { SimRequestError } from '../errors';
import { ok, readBody, type ServiceApi } from './route';

const updateSchema = z.object({
  state: z.array(z.string()).length(1, 'state must hold exactly one of DRAIN, RESUME, FAIL'),
  reason: z.string().optional(),
});
/** v0.0.42's update_node_msg for `POST /nodes`: `name` is a hostlist given as a list. */
const batchUpdateSchema = updateSchema.extend({ name: z.array(z.string()).min(1, 'name must list at least one node') });

/** slurmrestd, any v0.0.4x: node listing and `scontrol update` through POST /node/{name}. */
export function slurmApi(sim: SiteSimulator): ServiceApi {
  const wlm = sim.workloadManager;
  const update = (names: readonly string[], { state, reason }: z.output<typeof updateSchema>) => {
    const wanted = state[0]!.toUpperCase();
    // slurmctld refuses DRAIN and FAIL without a reason.
    if ((wanted === 'DRAIN' || wanted === 'FAIL') && !reason?.trim()) throw new SimRequestError(400, `a reason is required to set ${wanted}`);
    if (wanted !== 'DRAIN' && wanted !== 'FAIL' && wanted !== 'RESUME') throw new SimRequestError(400, `unsupported node state '${state[0]}': use DRAIN, RESUME or FAIL`);
    for (const name of names) {
      if (wanted === 'DRAIN') wlm.drain(name, reason!);
      else if (wanted === 'FAIL') wlm.fail(name, reason!);
      else wlm.resume(name, reason);
    }
    return ok({ errors: [], warnings: [] });
  };
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
        // The running jobs: what idle-first and drain-ahead read a job's end from.
        method: 'GET',
        path: /^\/slurm\/v0\.0\.4\d\/jobs$/,
        handle: () => ok({ jobs: wlm.runningJobs().map(toSlurmJob), errors: [], warnings: [] }),
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
        handle: ([name], body) => update([name!], readBody(updateSchema, body)),
      },
      {
        // The batch update exists from v0.0.42 on.
        method: 'POST',
        path: /^\/slurm\/v0\.0\.4[2-9]\/nodes$/,
        handle: (_params, body) => {
          const { name, ...rest } = readBody(batchUpdateSchema, body);
          const names = name.flatMap((n) => expandHostlist(n));
          const unknown = names.filter((n) => !wlm.get(n));
          if (unknown.length > 0) throw new SimRequestError(404, `Invalid node name specified: ${unknown.join(',')}`);
          return update(names, rest);
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

/** A running job as slurmrestd's /jobs lists it: the fields a job's end is read from. */
function toSlurmJob(job: { jobId: number; node: string; endsAt: number }) {
  const infinite = !Number.isFinite(job.endsAt);
  return { job_id: job.jobId, job_state: ['RUNNING'], nodes: job.node, end_time: { set: !infinite, infinite, number: infinite ? 0 : Math.floor(job.endsAt / 1000) } };
}
