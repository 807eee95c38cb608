import { createHash } from 'node:crypto';
import { shortNameWithRun } from '../../core/site/node-claims';
import { z } from 'zod';
import { validLabel, validTemplate } from '../../core/site/names';
import { EmptyBootSessionError } from '../../core/errors';
import type { BootLimit, BootNodeOutcome, BootService, BootSessionRequest, BootSessionStatus, BootSetSpec } from '../../ports/site';
import type { Token } from './secret-token';
import { HttpJsonClient, urlPath, type JsonResponse } from './http-json-client';

export interface BosOptions {
  /** BOS's base, e.g. https://api-gw-service-nmn.local/apis/bos (the paths below start at /v2). */
  baseUrl: string;
  bearerToken?: Token;
  timeoutMs?: number;
}

/** V2SessionCreate.name: a Kubernetes name of at most 45 characters. */
const BOS_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const BOS_NAME_MAX = 45;

/**
 * V2Session, read as BOS serves it: the spec's nullable fields (`status.error`, `status.end_time`,
 * `tenant`) come as null, and BOS fills `components` only once its setup operator has run (the
 * POST answers `''`). Fields we do not read are not checked.
 */
const sessionResponse = z.object({
  name: z.string(),
  components: z.string().nullish(),
  status: z.object({ status: z.enum(['pending', 'running', 'complete']), error: z.string().nullish() }),
});

/** V2Component, the fields the outcome is read from; absent or null alike (BOS's records fill them over time). */
const componentsResponse = z.array(
  z.object({
    id: z.string(),
    enabled: z.boolean().nullish(),
    error: z.string().nullish(),
    session: z.string().nullish(),
    status: z.object({ phase: z.string().nullish(), status: z.string().nullish() }).nullish(),
  }),
);
type BosComponent = z.output<typeof componentsResponse>[number];

/** V2SessionTemplateArray: the templates by name (the rest of each is not read). */
const templateListResponse = z.array(z.object({ name: z.string() }));

/** V2SessionTemplate's boot sets (Cray-HPE/bos api/openapi.yaml.in, V2BootSet): the node fields session setup reads. */
const templateResponse = z.object({
  boot_sets: z
    .record(
      z.string(),
      z.object({
        node_list: z.array(z.string()).nullish(),
        node_groups: z.array(z.string()).nullish(),
        node_roles_groups: z.array(z.string()).nullish(),
        arch: z.string().nullish(),
      }),
    )
    .nullish(),
});

/**
 * BOS v2 (Cray-HPE/bos api/openapi.yaml): reboot sessions over a limit, polled by name; each
 * node's outcome read from `/v2/components?session=<name>`.
 */
export class BosBootService implements BootService {
  private readonly http: HttpJsonClient;

  constructor({ baseUrl, bearerToken, timeoutMs }: BosOptions) {
    this.http = new HttpJsonClient({ service: 'boot-service', baseUrl, bearerToken, timeoutMs });
  }

  async templateExists(templateName: string): Promise<boolean> {
    validTemplate(templateName, 'templateName');
    const response = await this.http.request('GET', urlPath`/v2/sessiontemplates/${templateName}`, { accept: [404] });
    return response.status !== 404;
  }

  /** The session templates BOS has (`GET /v2/sessiontemplates`), for an error that names the ones to choose from. */
  async templateNames(): Promise<string[]> {
    const response = await this.http.request('GET', urlPath`/v2/sessiontemplates`);
    return this.http
      .parse(templateListResponse, response)
      .map((template) => template.name)
      .sort();
  }

  /**
   * The template's boot sets: BOS's session setup boots only the nodes of the session's limit that
   * one of them names (src/bos/operators/session_setup.py). A boot set for an architecture other
   * than X86 is left out (our nodes are X86 as far as we know; BOS counts unknown arch as X86).
   */
  async templateBootSets(templateName: string): Promise<BootSetSpec[] | undefined> {
    validTemplate(templateName, 'templateName');
    const response = await this.http.request('GET', urlPath`/v2/sessiontemplates/${templateName}`, { accept: [404] });
    if (response.status === 404) return undefined;
    const sets = Object.entries(this.http.parse(templateResponse, response).boot_sets ?? {});
    if (sets.length === 0) return undefined;
    return sets
      .filter(([, set]) => (set.arch ?? 'X86') === 'X86' || set.arch === 'Unknown')
      .map(([name, set]) => ({
        name,
        ...(set.node_list ? { nodeList: set.node_list } : {}),
        ...(set.node_groups ? { nodeGroups: set.node_groups } : {}),
        ...(set.node_roles_groups ? { nodeRolesGroups: set.node_roles_groups } : {}),
      }));
  }

  async createSession(request: BootSessionRequest): Promise<BootSessionStatus> {
    validTemplate(request.templateName, 'templateName');
    const limit = bosLimit(request.name, request.limit);
    return this.http.createOrRead(
      '/v2/sessions',
      { name: bosSessionName(request.name), operation: request.operation, template_name: request.templateName, limit },
      'session',
      () => this.getSession(request.name),
      (response) => this.toStatus(request.name, response),
    );
  }

  async getSession(name: string): Promise<BootSessionStatus | undefined> {
    const response = await this.http.request('GET', urlPath`/v2/sessions/${bosSessionName(name)}`, { accept: [404] });
    return response.status === 404 ? undefined : this.toStatus(name, response);
  }

  private async toStatus(name: string, response: JsonResponse): Promise<BootSessionStatus> {
    const session = this.http.parse(sessionResponse, response);
    const complete = session.status.status === 'complete';
    const members = (session.components ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const byId = new Map<string, BosComponent>();
    if (members.length > 0) {
      const components = await this.http.request('GET', `/v2/components?session=${encodeURIComponent(session.name)}`);
      for (const c of this.http.parse(componentsResponse, components)) byId.set(c.id, c);
    }
    const nodes: Record<string, BootNodeOutcome> = {};
    for (const node of members) nodes[node] = outcomeOf(byId.get(node), complete);
    return {
      name,
      // BOS v2 says `pending` before it starts working: still running to the caller.
      status: complete ? 'complete' : 'running',
      ...(session.status.error ? { error: session.status.error } : {}),
      nodes,
    };
  }
}

/**
 * BOS v2's limit (V2SessionCreate.limit) on the wire: a comma-separated list of xnames, group labels
 * or roles, each part looked up as a group or role first and taken as an id otherwise
 * (Cray-HPE/bos src/bos/operators/session_setup.py, _apply_limit). A group travels as its label, a
 * list of nodes as their names joined by commas. An empty limit is never sent: BOS reads it as no
 * limit at all (every node of the template's boot sets).
 */
function bosLimit(session: string, limit: BootLimit): string {
  if ('label' in limit) return validLabel(limit.label, 'limit.label');
  const nodes = [...new Set(limit.nodes.map((node, i) => validLabel(node, `limit.nodes[${i}]`)))];
  if (nodes.length === 0) throw new EmptyBootSessionError('boot-service', session, 'its limit lists no node');
  return nodes.join(',');
}

/**
 * Our session names (`rollout-<uuid>-step-N`) are longer than BOS allows; a name that does not fit
 * is replaced by `r-<run id>-<digest of it>`, the same every time, so a retried create still meets
 * its session and BOS still shows which run made it (core/site/node-claims.ts).
 */
export function bosSessionName(name: string): string {
  if (name.length <= BOS_NAME_MAX && BOS_NAME.test(name)) return name;
  const digest = (text: string) => createHash('sha256').update(text).digest('hex');
  // Still naming the run (`r-<run id>-<digest>`), so BOS's session list shows who booted the node.
  return shortNameWithRun(name, BOS_NAME_MAX, digest) ?? `rollout-${digest(name).slice(0, 32)}`;
}

/**
 * A component BOS still manages for the session is booting (or pending before the operators pick
 * it up); one BOS let go of is `stable` (succeeded) or `failed`. A node the session no longer
 * manages once it is complete (another session took it over) has no confirmed reboot: failed.
 */
function outcomeOf(component: BosComponent | undefined, sessionComplete: boolean): BootNodeOutcome {
  if (!component) return sessionComplete ? 'failed' : 'pending';
  const status = component.status?.status;
  if (status === 'failed') return 'failed';
  if (component.enabled === false) return status === 'stable' ? 'succeeded' : 'failed';
  return component.status?.phase ? 'booting' : 'pending';
}
