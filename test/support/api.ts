import type { EmbeddedRuntime } from '../../local/embedded-runtime';
import { startServedControlPlane, type ServedControlPlane } from '../../local/serve';
import type { SiteDefinition } from '../../simulator';
import { checkContract } from './api-contract';

export interface ApiReply {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read whatever the API answered
}

/** The control plane `rollout serve` runs, in-process on ephemeral ports, on virtual time: its REST API at `endpoints.apiEndpoint`. */
export async function startServedApi(site: SiteDefinition): Promise<ServedControlPlane & { apiEndpoint: string }> {
  const served = await startServedControlPlane({ site: { kind: 'simulated', definition: site } });
  return { ...served, apiEndpoint: served.endpoints.apiEndpoint! };
}

/**
 * One HTTP request to the API. Runs as work in progress on the runtime's clock, so that on virtual
 * time the request lands at the simulated instant the test last saw. Every answer is checked against
 * the OpenAPI document (its status documented, its body the documented schema): a test fails on one that is not.
 */
export async function call(runtime: EmbeddedRuntime, apiEndpoint: string, method: string, path: string, body?: unknown): Promise<ApiReply> {
  return runtime.clock.busy(async () => {
    const response = await fetch(`${apiEndpoint}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    const reply = { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
    checkContract(method, path, reply.status, response.headers.get('content-type'), reply.body);
    return reply;
  });
}
