import pLimit from 'p-limit';
import { z } from 'zod';
import { SiteServiceError } from '../../core/errors';
import { BLANK_REASON } from '../../core/site/node-claims';
import { DEFAULT_SLURMRESTD_VERSION } from '../../core/site/site-profile';
import { validNodeName, validNodeNames, validSiteReason } from '../../core/site/names';
import type { WlmNode, WorkloadManager } from '../../ports/site';
import { runningJobEnds, slurmJsonJobs, slurmJsonNodes, toWlmNode } from './slurm-json';
import { HttpJsonClient, urlPath } from './http-json-client';
import type { Token } from './secret-token';

export interface SlurmRestOptions {
  baseUrl: string;
  /** slurmrestd's data_parser version (core/site/site-profile.ts SLURMRESTD_VERSIONS); default DEFAULT_SLURMRESTD_VERSION. */
  apiVersion?: string;
  userName?: string;
  token?: Token;
  timeoutMs?: number;
}

/** Above this many names one listing of every node beats per-node requests. */
const BULK_THRESHOLD = 16;
const CONCURRENCY = 16;
/** Node names per batch `POST /nodes` (v0.0.42+): keeps a request body small. */
const BATCH_SIZE = 500;
const updateResponse = z.object({ errors: slurmJsonNodes.shape.errors });
/** A single-node read: `nodes` is absent when slurmrestd could not read the node. */
const nodeResponse = z.object({ nodes: slurmJsonNodes.shape.nodes.optional(), errors: slurmJsonNodes.shape.errors });
/** slurm_strerror(ESLURM_INVALID_NODE_NAME), and what older releases say of a node they do not have. */
const UNKNOWN_NODE = /invalid node name|not found|unknown node/i;
type SlurmRestError = NonNullable<z.output<typeof nodeResponse>['errors']>[number];

/**
 * Whether one of slurmrestd's errors says slurmctld does not know node `name`. Slurm 24.11 and 26.05
 * answer `GET /node/<name>` 200 with `{description: "Failure to query node <name>", error_number: 0,
 * error: "No error", source: "_dump_nodes"}` (captured from Debian's 24.11.5 and 26.05.5): in
 * src/slurmrestd/plugins/openapi/slurmctld/nodes.c _dump_nodes, slurm_load_node_single succeeded with
 * no record, so errno is 0. The same description with an errno is a load that failed (slurmctld not
 * answering): a site failure, not an unknown node. Older answers name the error itself (`Invalid node
 * name specified`).
 */
function saysUnknownNode(error: SlurmRestError, name: string): boolean {
  if (UNKNOWN_NODE.test(error.error ?? '') || UNKNOWN_NODE.test(error.description ?? '')) return true;
  const noErrno = error.error_number === 0 || (error.error_number === undefined && error.error === 'No error');
  return noErrno && error.description === `Failure to query node ${name}`;
}

/** Slurm through slurmrestd: node states and `scontrol update` equivalents. */
export class SlurmRestWorkloadManager implements WorkloadManager {
  private readonly http: HttpJsonClient;
  private readonly prefix: string;
  private readonly batchUpdates: boolean;

  constructor({ baseUrl, apiVersion = DEFAULT_SLURMRESTD_VERSION, userName, token, timeoutMs }: SlurmRestOptions) {
    const headers: Record<string, string> = {};
    if (userName) headers['X-SLURM-USER-NAME'] = userName;
    this.http = new HttpJsonClient({
      service: 'workload-manager',
      baseUrl,
      timeoutMs,
      headers,
      ...(token ? { tokenHeader: { name: 'X-SLURM-USER-TOKEN', token } } : {}),
    });
    this.prefix = urlPath`/slurm/${apiVersion}`;
    this.batchUpdates = Number(/^v0\.0\.(\d+)$/.exec(apiVersion)?.[1] ?? 0) >= 42;
  }

  async getNodes(names: readonly string[]): Promise<Map<string, WlmNode>> {
    const wanted = new Set(validNodeNames(names));
    const found = new Map<string, WlmNode>();
    if (wanted.size > BULK_THRESHOLD) {
      const response = await this.http.request('GET', `${this.prefix}/nodes`);
      for (const node of this.http.parse(slurmJsonNodes, response).nodes) if (wanted.has(node.name)) found.set(node.name, toWlmNode(node));
      return found;
    }
    const limit = pLimit(CONCURRENCY);
    await Promise.all(
      [...wanted].map((name) =>
        limit(async () => {
          const response = await this.http.request('GET', `${this.prefix}${urlPath`/node/${name}`}`, { accept: [404, 500] });
          if (response.status === 404) return;
          // An unknown name is answered 200 with errors[] and no nodes, or 500 (saysUnknownNode): that node is absent, the rest of the poll stands.
          const body = this.http.parse(nodeResponse, response);
          const node = body.nodes?.find((n) => n.name === name);
          if (node) {
            found.set(name, toWlmNode(node));
            return;
          }
          // Absent, as the scontrol connector leaves a name Slurm does not know: the run says `nodes unknown to the workload-manager`.
          if ((body.errors ?? []).some((e) => saysUnknownNode(e, name))) return;
          const errors = (body.errors ?? []).map((e) => [e.error, e.description].filter(Boolean).join(': ')).join('; ');
          if (response.status !== 500 && errors === '') return;
          throw new SiteServiceError(
            'workload-manager',
            `${response.request} answered ${response.status}: ${errors || 'no node and no error'}`,
            response.status,
          );
        }),
      ),
    );
    return found;
  }

  /** One `GET /jobs` (every job slurmctld still knows): the latest end of each wanted node's running jobs. */
  async getJobEnds(names: readonly string[]): Promise<Map<string, number>> {
    if (names.length === 0) return new Map();
    const response = await this.http.request('GET', `${this.prefix}/jobs`);
    return runningJobEnds(this.http.parse(slurmJsonJobs, response).jobs, new Set(names));
  }

  drain(name: string, reason: string): Promise<void> {
    return this.update(name, { state: ['DRAIN'], reason });
  }

  resume(name: string, reason?: string): Promise<void> {
    return this.update(name, { state: ['RESUME'], ...(reason === undefined ? {} : { reason }) });
  }

  fail(name: string, reason: string): Promise<void> {
    return this.update(name, { state: ['FAIL'], reason });
  }

  drainNodes(names: readonly string[], reason: string): Promise<void> {
    return this.updateMany(names, { state: ['DRAIN'], reason });
  }

  resumeNodes(names: readonly string[]): Promise<void> {
    return this.updateMany(names, { state: ['RESUME'] });
  }

  failNodes(names: readonly string[], reason: string): Promise<void> {
    return this.updateMany(names, { state: ['FAIL'], reason });
  }

  /** The update with the reason alone (update_node_msg's state left unset: slurmctld sets the reason only). */
  clearReasons(names: readonly string[]): Promise<void> {
    return this.updateMany(names, { reason: BLANK_REASON });
  }

  /** v0.0.42+: one `POST /nodes` naming every node; v0.0.41 has no batch update, so one request per node. */
  private async updateMany(names: readonly string[], body: { state?: string[]; reason?: string }): Promise<void> {
    const unique = [...new Set(validNodeNames(names))];
    if (body.reason !== undefined && body.reason !== BLANK_REASON) validSiteReason(body.reason);
    if (unique.length === 0) return;
    if (this.batchUpdates) {
      for (let i = 0; i < unique.length; i += BATCH_SIZE) await this.post(`${this.prefix}/nodes`, { ...body, name: unique.slice(i, i + BATCH_SIZE) });
      return;
    }
    const limit = pLimit(CONCURRENCY);
    await Promise.all(unique.map((name) => limit(() => this.update(name, body))));
  }

  private async update(name: string, body: { state?: string[]; reason?: string }): Promise<void> {
    validNodeName(name);
    if (body.reason !== undefined && body.reason !== BLANK_REASON) validSiteReason(body.reason);
    return this.post(`${this.prefix}${urlPath`/node/${name}`}`, body);
  }

  private async post(path: string, body: { state?: string[]; reason?: string; name?: string[] }): Promise<void> {
    const response = await this.http.request('POST', path, { body });
    // slurmrestd may answer 200 and still report the update failed.
    const errors = this.http.parse(updateResponse, response).errors ?? [];
    if (errors.length > 0) {
      const detail = errors.map((e) => e.error ?? e.description ?? 'unknown error').join('; ');
      throw new SiteServiceError('workload-manager', `${response.request} (${body.state?.[0] ?? 'reason'}) reported: ${detail}`, response.status);
    }
  }
}
