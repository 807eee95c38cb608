import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { MASKED_VALUE } from '../../core/environments';
import { runCli } from '../support/cli';
import { fuelEnvironments } from '../support/environments';
import { startServe, type RunningServe } from '../support/serve';

// `rollout serve` as its own process, serving the REST API; `rollout env` processes as its clients.
describe('rollout env, a client of the REST API that rollout serve serves', () => {
  let dir: string;
  let serve: RunningServe;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-env-'));
    const site = path.join(dir, 'site.yaml');
    await writeFile(site, stringify({ nodes: [{ name: 'n1', nid: 1 }], ...fuelEnvironments() }));
    serve = await startServe(['--site', site]);
  }, 120_000);
  afterAll(async () => {
    await serve?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the API over HTTP from the served process', async () => {
    const api = serve.endpoints.apiEndpoint!;
    expect((await fetch(`${api}/openapi.json`)).status).toBe(200);
    const prod = (await (await fetch(`${api}/environments/1`)).json()) as { attributes: { generated: { mysql: { root_password: string } } } };
    expect(prod.attributes.generated.mysql.root_password).toBe(MASKED_VALUE);
    expect((await fetch(`${api}/environments/1`, { method: 'PUT' })).status).toBe(405);
  });

  it('lists, clones, assigns and gets; refusals exit non-zero with the problem', async () => {
    const endpoint = ['--endpoint', serve.endpoints.stepFunctionsEndpoint];
    const listed = await runCli(['env', 'list', ...endpoint]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('1\tprod\trelease 1\toperational\t3 node(s)');

    const cloned = await runCli(['env', 'clone', '1', '--name', 'prod-8.0', '--release', '2', ...endpoint, '--json']);
    expect(cloned.code).toBe(0);
    expect(JSON.parse(cloned.stdout)).toMatchObject({ id: 4, name: 'prod-8.0', original_cluster_id: 1 });

    const conflict = await runCli(['env', 'clone', '2', '--name', 'x', '--release', '2', ...endpoint]);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain('409');
    expect(conflict.stderr).toContain('attributes.editable.storage.iser');

    const assigned = await runCli(['env', 'assign', '4', '--node', '11', '--api', serve.endpoints.apiEndpoint!]);
    expect(assigned.stderr).toBe('');
    expect(assigned.stdout).toBe('assigned node 11 (node-11, controller, 10.20.0.11) to environment 4\n');

    const got = await runCli(['env', 'get', '4', ...endpoint]);
    expect(got.stdout).toContain('node 11\tnode-11\tcontroller\t10.20.0.11\t52:54:00:00:00:11');

    const bad = await runCli(['env', 'assign', '4', '--node', 'eleven', ...endpoint]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--node must be a positive whole number');
  }, 180_000);
});
