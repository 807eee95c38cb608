import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { BootComponentRecord, BootSessionRecord } from '../models/boot-service';
import type { SiteSimulator } from '../site-simulator';
import { SimRequestError } from '../errors';
import { ok, problem, readBody, type ServiceApi } from './route';

const required = (field: string) => z.string({ error: `${field} is required` }).trim().min(1, `${field} must not be empty`);

/** V2SessionCreate (Cray-HPE/bos api/openapi.yaml): the name is optional (BOS makes one), a Kubernetes name. */
const sessionSchema = z.strictObject({
  name: z
    .string()
    .max(45, 'name must be at most 45 characters')
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'name must be a lowercase Kubernetes name')
    .optional(),
  operation: z.enum(['boot', 'reboot', 'shutdown'], { error: "operation must be 'boot', 'reboot' or 'shutdown'" }),
  template_name: required('template_name'),
  // The simulated templates have no boot sets of their own, so the limit says which nodes.
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
        path: /^\/bos\/v2\/sessiontemplates\/([^/]+)$/,
        handle: ([name]) => {
          if (!boot.templateExists(name!)) throw new SimRequestError(404, `Sessiontemplate ${name} could not be found`);
          return ok({ name, boot_sets: {} });
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
          return ok(toBosSession(created), 201);
        },
      },
      { method: 'GET', path: /^\/bos\/v2\/sessions\/([^/]+)$/, handle: ([name]) => ok(toBosSession(session(name!))) },
      { method: 'GET', path: /^\/bos\/v2\/sessions\/([^/]+)\/status$/, handle: ([name]) => ok(extendedStatus(session(name!), boot.components({ session: name! }))) },
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

/** V2Session: `components` is the comma-separated list of the nodes the session started with. */
function toBosSession(session: BootSessionRecord) {
  return {
    name: session.name,
    operation: session.operation,
    template_name: session.templateName,
    limit: session.limit,
    stage: false,
    components: Object.keys(session.components).join(','),
    status: { status: session.status, start_time: new Date(session.createdAt).toISOString() },
  };
}

/** V2Component: enabled while BOS works on it; `stable` or `failed` once it let go. */
function toBosComponent(component: BootComponentRecord, now: number) {
  const working = component.outcome === 'booting' || component.outcome === 'pending';
  const status =
    component.outcome === 'succeeded'
      ? { phase: '', status: 'stable' }
      : component.outcome === 'failed'
        ? { phase: '', status: 'failed' }
        : component.outcome === 'booting'
          ? { phase: 'powering_on', status: 'power_on_called' }
          : { phase: '', status: '' };
  return {
    id: component.id,
    session: component.session,
    enabled: working,
    status,
    last_action: { action: 'power_on', last_updated: new Date(now).toISOString(), num_attempts: 1 },
    ...(component.outcome === 'failed' ? { error: 'the node did not boot' } : {}),
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
    phases: { percent_complete: percent('succeeded') + percent('failed'), percent_powering_on: percent('booting'), percent_powering_off: 0, percent_configuring: 0 },
    error_summary: {},
    timing: { start_time: new Date(session.createdAt).toISOString() },
  };
}
