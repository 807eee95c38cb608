import { createApi } from '../../api';
import { listenApi, type ListeningApi } from '../../api/node-http';
import type { EmbeddedRuntime } from '../../engine/embedded-runtime';

export interface ApiReply {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read whatever the API answered
}

/** The API over an embedded runtime, on an ephemeral loopback port, as `rollout serve` serves it. */
export async function startApi(runtime: EmbeddedRuntime): Promise<ListeningApi> {
  return listenApi(createApi({ controlPlane: runtime, environments: runtime.environments }));
}

/**
 * One HTTP request to the API. Runs as work in progress on the runtime's clock, so that on virtual
 * time the request lands at the simulated instant the test last saw.
 */
export async function call(runtime: EmbeddedRuntime, api: ListeningApi, method: string, path: string, body?: unknown): Promise<ApiReply> {
  return runtime.clock.busy(async () => {
    const response = await fetch(`${api.url}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  });
}
