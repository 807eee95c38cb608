import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { BootComponentRecord, BootSessionRecord } from '../models/boot-service';
import type { SiteSimulator } from '../site-simulator';
import { SimRequestError } from '../errors';
import { ok, problem, readBody, type ServiceApi } from './route';

const required = (field: string) =>
  z
    .string({ error: `${field} is required` })
    .trim()
    .min(1, `${field} must not be empty`);

/** V2SessionCreate (Cray-HPE/bos api/openapi.yaml): the name is optional (BOS makes one), a Kubernetes name. */
const sessionSchema = z.strictObject({
  name: z
    .string()
    .max(45, 'name must be at most 45 characters')
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'name must be a lowercase Kubernetes name')
    .optional(),
  operation: z.enum(['boot', 'reboot', 'shutdown'], { error: "operation must be 'boot', 'reboot' or 'shutdown'" }),
  template_name: required('template_name'),
  // A template given by name alone has no boot sets: its limit says which nodes. One with boot sets follows BOS's session setup.
  limit: required('limit'),
  stage: z.boolean().optional(),
});

/** BOS v2 under `/bos`: session templates (read only), sessions, session status and components. */
export function bosApi(sim: SiteSimulator): ServiceApi {
  const boot = sim.bootService;
  const session = (name: string) => {
    const found = boot.getSession(name);
    if (!found) throw new SimRequestError(404, `Session ${name} could not be found`);
    return found;
  };
  return {
    service: 'boot-service',
    prefix: /^\/bos\//,
    errorBody: problem,
    routes: [
      {
        method: 'GET',
        path: /^\/bos\/v2\/sessiontemplates$/,
        handle: () => ok(boot.templateNames().map((name) => ({ name, tenant: null, enable_cfs: false, boot_sets: boot.bootSets(name) }))),
      },
      {
        method: 'GET',
        path: /^\/bos\/v2\/sessiontemplates\/([^/]+)$/,
        handle: ([name]) => {
          if (!boot.templateExists(name!)) throw new SimRequestError(404, `Sessiontemplate ${name} could not be found`);
          // V2SessionTemplate (Cray-HPE/bos api/openapi.yaml.in): boot_sets by name, each with the node fields BOS's session setup reads.
          return ok({ name, tenant: null, enable_cfs: false, boot_sets: boot.bootSets(name!) });
        },
      },
      {
        method: 'POST',
        path: /^\/bos\/v2\/sessions$/,
        handle: (_params, body) => {
          const request = readBody(sessionSchema, body);
          if (request.operation !== 'reboot' || request.stage) throw new SimRequestError(400, 'the simulated BOS runs unstaged reboot sessions only');
          const created = boot.createSession({
            name: request.name ?? randomUUID(),
            operation: 'reboot',
            templateName: request.template_name,
            limit: request.limit,
          });
          return ok(toBosSession(created, { justCreated: true }), 201);
        },
      },
      { method: 'GET', path: /^\/bos\/v2\/sessions\/([^/]+)$/, handle: ([name]) => ok(toBosSession(session(name!))) },
      {
        method: 'GET',
        path: /^\/bos\/v2\/sessions\/([^/]+)\/status$/,
        handle: ([name]) => ok(extendedStatus(session(name!), boot.components({ session: name! }))),
      },
      {
        method: 'GET',
        path: /^\/bos\/v2\/components$/,
        handle: (_params, _body, query) => {
          const ids = query.get('ids');
          const filter = { session: query.get('session') ?? undefined, ids: ids ? ids.split(',').map((s) => s.trim()) : undefined };
          return ok(boot.components(filter).map((c) => toBosComponent(c, sim.clock.now())));
        },
      },
      {
        method: 'GET',
        path: /^\/bos\/v2\/components\/([^/]+)$/,
        handle: ([id]) => {
          const [component] = boot.components({ ids: [id!] });
          if (!component) throw new SimRequestError(404, `Component ${id} could not be found`);
          return ok(toBosComponent(component, sim.clock.now()));
        },
      },
    ],
  };
}

/**
 * V2Session as BOS serves it: the generated model's `to_dict()`, so the nullable fields are there
 * as null (`tenant`, `status.end_time`, `status.error`). POST answers the record just stored,
 * `pending` with no components yet (BOS's session-setup operator fills them in later); a later
 * read gives the comma-separated list of the nodes the session started with.
 */
function toBosSession(session: BootSessionRecord, { justCreated = false } = {}) {
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  return {
    name: session.name,
    tenant: null,
    operation: session.operation,
    template_name: session.templateName,
    limit: session.limit,
    stage: false,
    components: justCreated ? '' : Object.keys(session.components).join(','),
    include_disabled: false,
    status: {
      start_time: iso(session.createdAt),
      end_time: justCreated ? null : iso(session.completedAt),
      status: justCreated ? 'pending' : session.status,
      error: justCreated ? null : (session.error ?? null),
    },
  };
}

/**
 * V2Component: enabled while BOS works on it; `stable` or `failed` once it let go. Like BOS's own
 * records, `error` and `status_override` are empty strings when there is nothing to say.
 */
function toBosComponent(component: BootComponentRecord, now: number) {
  const working = component.outcome === 'booting' || component.outcome === 'pending';
  const status =
    component.outcome === 'succeeded'
      ? { phase: '', status: 'stable', status_override: '' }
      : component.outcome === 'failed'
        ? { phase: '', status: 'failed', status_override: '' }
        : component.outcome === 'booting'
          ? { phase: 'powering_on', status: 'power_on_called', status_override: '' }
          : { phase: '', status: '', status_override: '' };
  return {
    id: component.id,
    actual_state: { boot_artifacts: { kernel: '', kernel_parameters: '', initrd: '' }, bss_token: '', last_updated: new Date(now).toISOString() },
    session: component.session,
    enabled: working,
    status,
    last_action: { action: 'power_on', last_updated: new Date(now).toISOString(), failed: component.outcome === 'failed' },
    error: component.outcome === 'failed' ? 'the node did not boot' : '',
    retry_policy: 3,
  };
}

/** V2SessionExtendedStatus over the components the session still manages. */
function extendedStatus(session: BootSessionRecord, components: readonly BootComponentRecord[]) {
  const total = Object.keys(session.components).length || 1;
  const percent = (outcome: string) => (100 * components.filter((c) => c.outcome === outcome).length) / total;
  return {
    status: session.status,
    managed_components_count: components.length,
    percent_successful: percent('succeeded'),
    percent_failed: percent('failed'),
    percent_staged: 0,
    phases: {
      percent_complete: percent('succeeded') + percent('failed'),
      percent_powering_on: percent('booting'),
      percent_powering_off: 0,
      percent_configuring: 0,
    },
    error_summary: {},
    timing: {
      start_time: new Date(session.createdAt).toISOString(),
      end_time: session.completedAt === undefined ? null : new Date(session.completedAt).toISOString(),
    },
  };
}
