import { z } from 'zod';
import { expandHostlist } from '../../core/site/hostlist';
import { metaV38, nodeV38 } from '../models/slurm-output';
import { apiVersionNumber, SlurmVersion } from '../models/slurm-version';
import type { WlmNodeSnapshot } from '../models/workload-manager';
import type { SiteSimulator } from '../site-simulator';
import { SimRequestError } from '../errors';
import { ok, readBody, type ServiceApi, type SimResponse } from './route';

const updateSchema = z
  .object({
    // update_node_msg's state is optional: without it slurmctld sets the reason alone (node_mgr.c update_node).
    state: z.array(z.string()).length(1, 'state must hold exactly one of DRAIN, RESUME, FAIL').optional(),
    reason: z.string().optional(),
  })
  .refine((body) => body.state !== undefined || body.reason !== undefined, 'an update needs a state or a reason');
/** v0.0.42's update_node_msg for `POST /nodes`: `name` is a hostlist given as a list. */
const batchUpdateSchema = z
  .object({
    state: z.array(z.string()).length(1, 'state must hold exactly one of DRAIN, RESUME, FAIL').optional(),
    reason: z.string().optional(),
    name: z.array(z.string()).min(1, 'name must list at least one node'),
  })
  .refine((body) => body.state !== undefined || body.reason !== undefined, 'an update needs a state or a reason');

/** ESLURM_INVALID_NODE_NAME and ESLURM_INVALID_NODE_STATE (slurm_errno.h). */
const INVALID_NODE_NAME = { errno: 2018, text: 'Invalid node name specified' };
const INVALID_NODE_STATE = { errno: 2011, text: 'Invalid node state specified' };
/**
 * `GET /node/<name>` of a node slurmctld does not know, from v0.0.40 on, as Slurm 24.11.5 and 26.05.5
 * answer it (captured: test/fixtures/slurm/node-unknown-24.11.5-v0.0.42.json and the others):
 * `Failure to query node <name>` with errno 0, "No error" (src/slurmrestd/plugins/openapi/slurmctld/nodes.c
 * _dump_nodes: slurm_load_node_single succeeded with no record, and resp_error is given errno).
 */
const NO_ERROR = { errno: 0, text: 'No error' };

/** What slurmrestd answers on a path it has no handler for (src/slurmrestd/operations.c). */
const NOT_DEFINED = 'Requested REST method is not defined at URL. Please view /openapi/v3 for API reference.';

/**
 * slurmrestd of the site's Slurm release (`slurm.version`): only the openapi versions that release
 * ships (slurm-version.ts), each in its own shape: v0.0.36-38 state as a lowercase string with
 * `state_flags` and GET only (src/plugins/openapi/v0.0.38/nodes.c); v0.0.39 state a list and plain
 * times; v0.0.40+ `{set, infinite, number}` times (src/plugins/data_parser/v0.0.41/parsers.c). Node
 * updates (`scontrol update` equivalents) through POST /node/{name} from v0.0.39 and POST /nodes from
 * v0.0.42. An unknown node is an error in `errors[]`: 500 up to v0.0.39, 200 from v0.0.40, where
 * op_handler_node returns success after resp_error (src/slurmrestd/plugins/openapi/slurmctld/nodes.c).
 */
export function slurmApi(sim: SiteSimulator): ServiceApi {
  const wlm = sim.workloadManager;
  const { apiVersion, errorAnswer, nodesBody, update } = restdAnswers(sim);
  return {
    service: 'workload-manager',
    prefix: /^\/slurm\//,
    errorBody: (_status, message) => ({ errors: [{ error: message, description: message }], warnings: [] }),
    routes: [
      {
        method: 'GET',
        path: /^\/slurm\/(v0\.0\.\d+)\/nodes$/,
        handle: ([v]) => ok(nodesBody(apiVersion(v!), wlm.list())),
      },
      {
        // The running jobs: what idle-first and drain-ahead read a job's end from.
        method: 'GET',
        path: /^\/slurm\/(v0\.0\.\d+)\/jobs$/,
        handle: ([v]) => {
          const n = apiVersionNumber(apiVersion(v!));
          const jobs = wlm.runningJobs();
          if (n <= 38) return ok({ meta: metaV38(wlm.version, v), errors: [], jobs: jobs.map(toJobV38) });
          return ok({ jobs: jobs.map((job) => toSlurmJob(job, n)), errors: [], warnings: [] });
        },
      },
      {
        method: 'GET',
        path: /^\/slurm\/(v0\.0\.\d+)\/node\/([^/]+)$/,
        handle: ([v, name]) => {
          const node = wlm.get(name!);
          if (!node) {
            const n = apiVersionNumber(apiVersion(v!));
            return errorAnswer(v!, n >= 40 ? NO_ERROR : INVALID_NODE_NAME, `Failure to query node ${name}`, n <= 38 ? { nodes: [] } : {});
          }
          return ok(nodesBody(apiVersion(v!), [node]));
        },
      },
      {
        method: 'POST',
        path: /^\/slurm\/(v0\.0\.\d+)\/node\/([^/]+)$/,
        handle: ([v, name], body) => {
          if (!SlurmVersion.canUpdateNodes(apiVersion(v!))) return { status: 405, body: NOT_DEFINED, contentType: 'text/plain' };
          if (!wlm.get(name!)) return errorAnswer(v!, INVALID_NODE_NAME, `Failure to update node ${name}`);
          return update(v!, [name!], readBody(updateSchema, body));
        },
      },
      {
        // The batch update exists from v0.0.42 on.
        method: 'POST',
        path: /^\/slurm\/(v0\.0\.\d+)\/nodes$/,
        handle: ([v], body) => {
          if (apiVersionNumber(apiVersion(v!)) < 42) return { status: 405, body: NOT_DEFINED, contentType: 'text/plain' };
          const { name, ...rest } = readBody(batchUpdateSchema, body);
          const names = name.flatMap((n) => expandHostlist(n));
          const unknown = names.filter((n) => !wlm.get(n));
          if (unknown.length > 0) return errorAnswer(v!, INVALID_NODE_NAME, `Failure to update node ${unknown.join(',')}`);
          return update(v!, names, rest);
        },
      },
    ],
  };
}

/** What slurmrestd answers, shared by its routes: the versions served, `meta`, errors, node lists and node updates. */
function restdAnswers(sim: SiteSimulator) {
  const wlm = sim.workloadManager;
  const version = wlm.version;
  const served = new Set(version.restdVersions);

  /** The version of a path, or a 404 as slurmrestd answers a plugin it did not load. */
  const apiVersion = (v: string): string => {
    if (!served.has(v))
      throw new SimRequestError(404, `Unable to find requested URL: Slurm ${version.full} serves openapi ${version.restdVersions.join(', ')}`);
    return v;
  };

  const meta = (v: string) => ({
    plugin: { type: 'openapi/slurmctld', name: 'Slurm OpenAPI slurmctld', data_parser: `data_parser/${v}`, accounting_storage: '' },
    slurm: { release: version.full },
  });

  const errorAnswer = (v: string, error: { errno: number; text: string }, description: string, extra: object = {}): SimResponse => {
    const n = apiVersionNumber(v);
    if (n <= 38) return { status: 500, body: { meta: metaV38(version, v), errors: [{ error: error.text, errno: error.errno }], ...extra } };
    const body = { errors: [{ description, error_number: error.errno, error: error.text, source: '_dump_nodes' }], warnings: [], meta: meta(v) };
    return { status: SlurmVersion.unknownNodeStatus(v), body };
  };

  const nodesBody = (v: string, nodes: readonly WlmNodeSnapshot[]) => {
    const featuresOf = sim.headNode.featuresReader();
    const n = apiVersionNumber(v);
    if (n <= 38) return { meta: metaV38(version, v), errors: [], nodes: nodes.map((node, i) => nodeV38(node, featuresOf(node.name), i, version)) };
    return { nodes: nodes.map((node) => toSlurmNode(node, n, featuresOf(node.name))), errors: [], warnings: [], meta: meta(v) };
  };

  const update = (v: string, names: readonly string[], { state, reason }: z.output<typeof updateSchema>): SimResponse => {
    if (state === undefined) {
      for (const name of names) wlm.setReason(name, reason!);
      return ok({ errors: [], warnings: [], meta: meta(v) });
    }
    const wanted = state[0]!.toUpperCase();
    // slurmctld refuses DRAIN and FAIL without a reason.
    if ((wanted === 'DRAIN' || wanted === 'FAIL') && !reason?.trim()) throw new SimRequestError(400, `a reason is required to set ${wanted}`);
    if (wanted !== 'DRAIN' && wanted !== 'FAIL' && wanted !== 'RESUME')
      throw new SimRequestError(400, `unsupported node state '${state[0]}': use DRAIN, RESUME or FAIL`);
    let invalid = false;
    for (const name of names) {
      if (wanted === 'DRAIN') wlm.drain(name, reason!);
      else if (wanted === 'FAIL') wlm.fail(name, reason!);
      else {
        try {
          wlm.resume(name, reason);
        } catch {
          invalid = true;
        }
      }
    }
    if (invalid) return errorAnswer(v, INVALID_NODE_STATE, `Failure to update node ${names.join(',')}`);
    return ok({ errors: [], warnings: [], meta: meta(v) });
  };

  return { apiVersion, errorAnswer, nodesBody, update };
}

/** v0.0.39+: the fields the connectors read (state a list; times plain in v0.0.39, `{set, infinite, number}` from v0.0.40). */
function toSlurmNode(node: WlmNodeSnapshot, apiVersion: number, features: { available: readonly string[]; active: readonly string[] }) {
  const boot = node.bootTime === undefined ? undefined : Math.floor(node.bootTime / 1000);
  return {
    name: node.name,
    state: [node.base, ...node.flags],
    reason: node.reason ?? '',
    boot_time: apiVersion >= 40 ? { set: boot !== undefined, infinite: false, number: boot ?? 0 } : (boot ?? 0),
    features: [...features.available],
    active_features: [...features.active],
  };
}

/** A running job as slurmrestd's /jobs lists it: the fields a job's end is read from. */
function toSlurmJob(job: { jobId: number; node: string; endsAt: number }, apiVersion: number) {
  const infinite = !Number.isFinite(job.endsAt);
  const end = infinite ? 0 : Math.floor(job.endsAt / 1000);
  return { job_id: job.jobId, job_state: ['RUNNING'], nodes: job.node, end_time: apiVersion >= 40 ? { set: !infinite, infinite, number: end } : end };
}

/** v0.0.38's job: `job_state` a string, `end_time` a number. */
function toJobV38(job: { jobId: number; node: string; endsAt: number }) {
  return { job_id: job.jobId, job_state: 'RUNNING', nodes: job.node, end_time: Number.isFinite(job.endsAt) ? Math.floor(job.endsAt / 1000) : 0 };
}
