import { SiteServiceError } from '../../../core/errors';
import { HttpJsonClient, urlPath } from '../../../adapters/site/http-json-client';
import { SlurmRestWorkloadManager } from '../../../adapters/site/slurm-rest-workload-manager';
import { stubServer } from '../../support/stub-server';

async function failure(promise: Promise<unknown>): Promise<SiteServiceError> {
  const err = await promise.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(SiteServiceError);
  return err as SiteServiceError;
}

describe('HttpJsonClient', () => {
  it('sends JSON with the configured headers and bearer token, and parses the answer', async () => {
    const stub = await stubServer(() => ({ status: 201, text: '{"ok":true}' }));
    try {
      const client = new HttpJsonClient({ service: 'boot-service', baseUrl: `${stub.url}/`, headers: { 'x-extra': '1' }, bearerToken: 'tok' });
      const response = await client.request('POST', '/things', { body: { a: 1 } });
      expect(response).toEqual({ request: `POST ${stub.url}/things`, status: 201, body: { ok: true } });
      expect(stub.seen[0]).toMatchObject({ method: 'POST', url: '/things', body: '{"a":1}' });
      expect(stub.seen[0]!.headers).toMatchObject({ authorization: 'Bearer tok', 'x-extra': '1', 'content-type': 'application/json' });
    } finally {
      await stub.close();
    }
  });

  it('sends Slurm auth headers from the workload manager connector', async () => {
    const stub = await stubServer(() => ({ status: 200, text: '{"nodes":[],"errors":[]}' }));
    try {
      const wlm = new SlurmRestWorkloadManager({ baseUrl: stub.url, userName: 'root', token: 'jwt' });
      await wlm.getNodes(['n1']);
      expect(stub.seen[0]!.headers).toMatchObject({ 'x-slurm-user-name': 'root', 'x-slurm-user-token': 'jwt' });
    } finally {
      await stub.close();
    }
  });

  it('reports a slurmrestd update whose errors list is not empty', async () => {
    const stub = await stubServer(() => ({ status: 200, text: '{"errors":[{"error":"Invalid node state transition"}],"warnings":[]}' }));
    try {
      const err = await failure(new SlurmRestWorkloadManager({ baseUrl: stub.url }).resume('n1'));
      expect(err.message).toMatch(/RESUME.*Invalid node state transition/);
    } finally {
      await stub.close();
    }
  });

  it('maps a 5xx to a SiteServiceError with the status and the service detail', async () => {
    const stub = await stubServer(() => ({ status: 503, text: '{"detail":"maintenance"}' }));
    try {
      const err = await failure(new HttpJsonClient({ service: 'inventory', baseUrl: stub.url }).request('GET', '/x'));
      expect(err).toMatchObject({ service: 'inventory', status: 503, message: `inventory: GET ${stub.url}/x answered 503: maintenance` });
    } finally {
      await stub.close();
    }
  });

  it('returns statuses the caller accepts instead of failing', async () => {
    const stub = await stubServer(() => ({ status: 404, text: '' }));
    try {
      const client = new HttpJsonClient({ service: 'inventory', baseUrl: stub.url });
      await expect(client.request('GET', '/x', { accept: [404] })).resolves.toMatchObject({ status: 404, body: undefined });
      expect((await failure(client.request('GET', '/x'))).status).toBe(404);
    } finally {
      await stub.close();
    }
  });

  it('fails on invalid JSON and on an unexpected body shape', async () => {
    const stub = await stubServer((path) => ({ status: 200, text: path === '/bad' ? '{nope' : '{"nodes":"many"}' }));
    try {
      const client = new HttpJsonClient({ service: 'workload-manager', baseUrl: stub.url });
      expect((await failure(client.request('GET', '/bad'))).message).toMatch(/invalid JSON/);
      expect((await failure(new SlurmRestWorkloadManager({ baseUrl: stub.url }).getNodes(['a']))).message).toMatch(/unexpected body at nodes/);
    } finally {
      await stub.close();
    }
  });

  it('times out a request that gets no answer', async () => {
    const stub = await stubServer(() => 'never');
    try {
      const err = await failure(new HttpJsonClient({ service: 'boot-service', baseUrl: stub.url, timeoutMs: 50 }).request('GET', '/slow'));
      expect(err.message).toBe(`boot-service: GET ${stub.url}/slow timed out after 50 ms`);
      expect(err.status).toBeUndefined();
    } finally {
      await stub.close();
    }
  });

  it('maps a refused connection to a SiteServiceError that says why', async () => {
    const stub = await stubServer(() => ({ status: 200, text: '{}' }));
    await stub.close();
    const err = await failure(new HttpJsonClient({ service: 'provisioner', baseUrl: stub.url }).request('GET', '/x'));
    expect(err.message).toMatch(new RegExp(`GET ${stub.url}/x failed: .*ECONNREFUSED`));
    expect(err.cause).toBeDefined();
  });
});

describe('urlPath', () => {
  it('encodes interpolated values only', () => {
    expect(urlPath`/hsm/v2/groups/${'a b/c'}/members/${'x?y'}`).toBe('/hsm/v2/groups/a%20b%2Fc/members/x%3Fy');
  });
});
