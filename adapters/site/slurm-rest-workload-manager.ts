import pLimit from 'p-limit';
import { z } from 'zod';
import { SiteServiceError } from '../../core/errors';
import type { WlmBaseState, WlmNode, WorkloadManager } from '../../ports/site';
import { HttpJsonClient, urlPath } from './http-json-client';

export interface SlurmRestOptions {
  baseUrl: string;
  /** slurmrestd's data_parser version; v0.0.40 is gone from Slurm 25.11. Default v0.0.41. */
  apiVersion?: string;
  userName?: string;
  token?: string;
  timeoutMs?: number;
}

/** Above this many names one listing of every node beats per-node requests. */
const BULK_THRESHOLD = 16;
const CONCURRENCY = 16;
const BASE_STATES: ReadonlySet<string> = new Set<WlmBaseState>(['IDLE', 'ALLOCATED', 'MIXED', 'COMPLETING', 'DOWN', 'FUTURE', 'UNKNOWN']);

const slurmNode = z.object({
  name: z.string(),
  state: z.array(z.string()),
  reason: z.string().optional(),
  boot_time: z.object({ set: z.boolean(), number: z.number().optional() }).optional(),
});
const nodesResponse = z.object({
  nodes: z.array(slurmNode),
  errors: z.array(z.object({ error: z.string().optional(), description: z.string().optional() })).optional(),
});
const updateResponse = z.object({ errors: nodesResponse.shape.errors });

/** Slurm through slurmrestd: node states and `scontrol update` equivalents. */
export class SlurmRestWorkloadManager implements WorkloadManager {
  private readonly http: HttpJsonClient;
  private readonly prefix: string;

  constructor({ baseUrl, apiVersion = 'v0.0.41', userName, token, timeoutMs }: SlurmRestOptions) {
    const headers: Record<string, string> = {};
    if (userName) headers['X-SLURM-USER-NAME'] = userName;
    if (token) headers['X-SLURM-USER-TOKEN'] = token;
    this.http = new HttpJsonClient({ service: 'workload-manager', baseUrl, timeoutMs, headers });
    this.prefix = urlPath`/slurm/${apiVersion}`;
  }

  async getNodes(names: readonly string[]): Promise<Map<string, WlmNode>> {
    const wanted = new Set(names);
    const found = new Map<string, WlmNode>();
    if (wanted.size > BULK_THRESHOLD) {
      const response = await this.http.request('GET', `${this.prefix}/nodes`);
      for (const node of this.http.parse(nodesResponse, response).nodes) if (wanted.has(node.name)) found.set(node.name, toWlmNode(node));
      return found;
    }
    const limit = pLimit(CONCURRENCY);
    await Promise.all(
      [...wanted].map((name) =>
        limit(async () => {
          const response = await this.http.request('GET', `${this.prefix}${urlPath`/node/${name}`}`, { accept: [404] });
          if (response.status === 404) return;
          const node = this.http.parse(nodesResponse, response).nodes.find((n) => n.name === name);
          if (node) found.set(name, toWlmNode(node));
        }),
      ),
    );
    return found;
  }

  drain(name: string, reason: string): Promise<void> {
    return this.update(name, { state: ['DRAIN'], reason });
  }

  resume(name: string): Promise<void> {
    return this.update(name, { state: ['RESUME'] });
  }

  fail(name: string, reason: string): Promise<void> {
    return this.update(name, { state: ['FAIL'], reason });
  }

  private async update(name: string, body: { state: string[]; reason?: string }): Promise<void> {
    const response = await this.http.request('POST', `${this.prefix}${urlPath`/node/${name}`}`, { body });
    // slurmrestd may answer 200 and still report the update failed.
    const errors = this.http.parse(updateResponse, response).errors ?? [];
    if (errors.length > 0) {
      const detail = errors.map((e) => e.error ?? e.description ?? 'unknown error').join('; ');
      throw new SiteServiceError('workload-manager', `${response.request} (${body.state[0]}) reported: ${detail}`, response.status);
    }
  }
}

function toWlmNode(node: z.output<typeof slurmNode>): WlmNode {
  const base = node.state.find((s) => BASE_STATES.has(s)) ?? 'UNKNOWN';
  const bootSeconds = node.boot_time?.set ? node.boot_time.number : undefined;
  return {
    name: node.name,
    base: base as WlmBaseState,
    flags: node.state.filter((s) => s !== base),
    reason: node.reason || undefined,
    bootTime: bootSeconds ? bootSeconds * 1000 : undefined,
  };
}
