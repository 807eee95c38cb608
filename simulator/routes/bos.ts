import { z } from 'zod';
import type { BootSessionRecord } from '../models/boot-service';
import type { SiteSimulator } from '../site-simulator';
import { SimRequestError } from '../errors';
import { ok, problem, readBody, type ServiceApi } from './route';

const required = (field: string) => z.string({ error: `${field} is required` }).trim().min(1, `${field} must not be empty`);

const sessionSchema = z.object({
  name: required('name'),
  operation: z.literal('reboot', { error: "operation must be 'reboot'" }),
  template_name: required('template_name'),
  limit: required('limit'),
});

/** BOS v2: session templates (read only) and boot sessions. */
export function bosApi(sim: SiteSimulator): ServiceApi {
  const boot = sim.bootService;
  return {
    service: 'boot-service',
    prefix: /^\/bos\//,
    errorBody: problem,
    routes: [
      {
        method: 'GET',
        path: /^\/bos\/v2\/sessiontemplates\/([^/]+)$/,
        handle: ([name]) => {
          if (!boot.templateExists(name!)) throw new SimRequestError(404, `session template '${name}' does not exist`);
          return ok({ name });
        },
      },
      {
        method: 'POST',
        path: /^\/bos\/v2\/sessions$/,
        handle: (_params, body) => {
          const request = readBody(sessionSchema, body);
          const session = boot.createSession({
            name: request.name,
            operation: request.operation,
            templateName: request.template_name,
            limit: request.limit,
          });
          return ok(toBosSession(session), 201);
        },
      },
      {
        method: 'GET',
        path: /^\/bos\/v2\/sessions\/([^/]+)$/,
        handle: ([name]) => {
          const session = boot.getSession(name!);
          if (!session) throw new SimRequestError(404, `session '${name}' does not exist`);
          return ok(toBosSession(session));
        },
      },
    ],
  };
}

function toBosSession(session: BootSessionRecord) {
  return {
    name: session.name,
    operation: session.operation,
    template_name: session.templateName,
    limit: session.limit,
    status: { status: session.status, start_time: new Date(session.createdAt).toISOString() },
    components: session.components,
  };
}
