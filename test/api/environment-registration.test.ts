import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { parseSiteProfile } from '../../core/site/site-profile';
import { startServedControlPlane, type ServedControlPlane } from '../../local/serve';
import { SimClock, siteProfileFor, startSiteSimulator, type RunningSiteSimulator } from '../../simulator';
import { checkContract } from '../support/api-contract';
import { pollUntil } from '../support/simulator';
import { runCliInProcess } from '../support/cli';
import { buildCloudSite, environmentUpgradeRequest } from '../support/environments';

// A `rollout serve --site-config`: the site is reached through its profile, so there is no site file
// to seed environments from. They are registered through the API (`rollout env import`), then upgraded.
describe('environments registered through the API on a serve driven by a site profile', () => {
  const TIME_SCALE = 400;
  const declared = buildCloudSite();
  let dir: string;
  let simulator: RunningSiteSimulator;
  let served: ServedControlPlane;
  const api = () => served.endpoints.apiEndpoint!;
  const request = async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${api()}${route}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const reply = { status: response.status, body: text ? JSON.parse(text) : undefined };
    checkContract(method, route, reply.status, response.headers.get('content-type'), reply.body);
    return reply;
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-env-import-'));
    // The simulated site holds the nodes and groups; its environments are not given to the serve.
    simulator = await startSiteSimulator({ site: declared, clock: new SimClock({ timeScale: TIME_SCALE }) });
    const profile = parseSiteProfile(siteProfileFor(simulator.urls, 'http', TIME_SCALE));
    served = await startServedControlPlane({ site: { kind: 'profile', profile, baseDir: dir } });
  });
  afterAll(async () => {
    await served?.close();
    await simulator?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('starts with none, registers them with rollout env import (again: unchanged), and refuses what conflicts, naming it', async () => {
    expect((await request('GET', '/environments')).body).toEqual([]);
    const file = path.join(dir, 'environments.yaml');
    await writeFile(file, stringify({ releases: declared.releases, environments: declared.environments }));

    const imported = await runCliInProcess(['env', 'import', file, '--api', api()]);
    expect({ code: imported.code, stderr: imported.stderr }).toEqual({ code: 0, stderr: '' });
    expect(imported.stdout.trim().split('\n')).toEqual([
      'release 1: registered',
      'release 2: registered',
      ...[1, 2, 3, 5].map((id) => `environment ${id}: registered`),
    ]);
    expect((await request('GET', '/environments/5')).body).toMatchObject({
      name: 'cloud',
      nodes: [{ id: 51 }, { id: 52 }, { id: 53 }, { id: 54 }, { id: 55 }],
      attributes: { generated: { mysql: { root_password: '********' } } },
    });
    expect((await request('GET', '/releases/2')).body).toMatchObject({ id: 2, bootTemplate: 'img-2' });
    const again = await runCliInProcess(['env', 'import', file, '--api', api()]);
    expect(again.code).toBe(0);
    expect(again.stdout).not.toContain('registered');

    const node = (id: number, name: string) => ({ id, name, roles: ['compute'], ip: '10.40.0.1', mac: '52:54:00:00:02:01' });
    const held = await request('POST', '/environments', { id: 9, name: 'x', release_id: 1, nodes: [node(51, 'ctl-1')] });
    expect(held).toMatchObject({ status: 409, body: { errors: [{ field: 'nodes[0].id', message: 'node 51 belongs to environment 5' }] } });
    const named = await request('POST', '/environments', { id: 9, name: declared.environments[0]!.name, release_id: 1, nodes: [] });
    expect(named).toMatchObject({
      status: 409,
      body: { errors: [{ field: 'name', message: `environment ${declared.environments[0]!.id} is named '${declared.environments[0]!.name}' already` }] },
    });
    const unknown = await request('POST', '/environments', { id: 9, name: 'x', release_id: 7, nodes: [node(91, 'nowhere-1')] });
    expect(unknown).toMatchObject({ status: 400 });
    expect(unknown.body.errors.map((e: { field: string }) => e.field)).toEqual(['release_id', 'nodes[0].name']);
    expect(await request('POST', '/releases', { ...declared.releases[1], name: 'Other' })).toMatchObject({ status: 409, body: { errors: [{ field: 'id' }] } });
    expect(await request('POST', '/releases', { id: 3, name: 'M', version: '9', roles: [], bootTemplate: 'img-9' })).toMatchObject({
      status: 400,
      body: { errors: [{ field: 'bootTemplate' }] },
    });
    expect(await request('POST', '/releases', { id: 3, name: 'M', version: '9', roles: [] })).toMatchObject({
      status: 400,
      body: { errors: [{ field: 'bootTemplate' }] },
    });

    const bad = path.join(dir, 'bad.yaml');
    await writeFile(
      bad,
      stringify({
        releases: [{ id: 1, name: 'r', version: '1', roles: [], bootTemplate: 'img-1' }],
        environments: [
          { id: 1, name: 'a', release_id: 4 },
          { id: 1, name: 'b', release_id: 1 },
        ],
      }),
    );
    const refused = await runCliInProcess(['env', 'import', bad, '--api', api()]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('environments[1].id: duplicate environment id 1');
    expect(refused.stderr).toContain('environments[0].release_id: no release with id 4');
  });

  it('upgrades a registered environment side by side on the site the profile names', async () => {
    const created = await request('POST', '/environments/5/upgrade', environmentUpgradeRequest());
    expect(created.status).toBe(201);
    const report = await pollUntil(
      async () => {
        const got = await request('GET', `/sessions/${created.body.id}`);
        return ['COMPLETE', 'FAILED'].includes(got.body.progress.phase) ? got.body : undefined;
      },
      120_000,
      50,
    );
    expect(report).toMatchObject({ state: 'READY', rollingUpgrades: { controllers: { counts: { UPGRADED: 2 } }, nodes: { counts: { UPGRADED: 3 } } } });
    for (const name of ['ctl-1', 'ctl-2', 'cmp-1', 'cmp-2', 'cmp-3']) expect(simulator.state().nodes[name]).toMatchObject({ bootCount: 1 });
  });
});
