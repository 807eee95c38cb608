import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { MASKED_VALUE } from '../../core/environments';
import { runCli } from '../support/cli';
import { buildCloudSite } from '../support/environments';
import { startServe, type RunningServe } from '../support/serve';

// `rollout serve` as its own process, serving the REST API; `rollout env` processes as its clients.
describe('rollout env, a client of the REST API that rollout serve serves', () => {
  let dir: string;
  let serve: RunningServe;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-env-'));
    const site = path.join(dir, 'site.yaml');
    await writeFile(site, stringify(buildCloudSite()));
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
    expect(listed.stdout).toMatch(/^ID +NAME +RELEASE +STATUS +NODES +SEED OF\n1 +prod +1 +operational +3\n/);

    const cloned = await runCli(['env', 'clone', '1', '--name', 'prod-8.0', '--release', '2', ...endpoint, '--json']);
    expect(cloned.code).toBe(0);
    // Seeds take ids above every declared environment (1, 2, 3 and 5).
    expect(JSON.parse(cloned.stdout)).toMatchObject({ id: 6, name: 'prod-8.0', original_cluster_id: 1 });

    const conflict = await runCli(['env', 'clone', '2', '--name', 'x', '--release', '2', ...endpoint]);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain('409');
    expect(conflict.stderr).toContain('attributes.editable.storage.iser');

    // An environment removed gives its name and nodes back; it is gone.
    const removed = await runCli(['env', 'remove', '3', ...endpoint]);
    expect({ code: removed.code, stdout: removed.stdout }).toEqual({ code: 0, stdout: 'environment 3 removed: its nodes and its name are free\n' });
    expect((await runCli(['env', 'get', '3', ...endpoint])).code).not.toBe(0);

    const assigned = await runCli(['env', 'assign', '6', '--node', '11', '--api', serve.endpoints.apiEndpoint!]);
    expect(assigned.stderr).toBe('');
    expect(assigned.stdout).toBe('assigned node 11 (node-11, controller, 10.20.0.11) to environment 6\n');

    const got = await runCli(['env', 'get', '6', ...endpoint]);
    expect(got.stdout).toMatch(/\nNODE +NAME +ROLES +IP +MAC\n(.*\n)*11 +node-11 +controller +10\.20\.0\.11 +52:54:00:00:00:11\n/);

    const bad = await runCli(['env', 'assign', '6', '--node', 'eleven', ...endpoint]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--node must be a positive whole number');
  }, 180_000);

  it('upgrades an environment side by side and follows it to the end, then deletes it; a refused request exits 2 naming the field', async () => {
    const endpoint = ['--endpoint', serve.endpoints.stepFunctionsEndpoint];
    const labels = ['--starting-label', 'cloud-nodes', '--upgrading-label', 'upgrading', '--failed-label', 'failed', '--poll-interval', '10'];
    const refused = await runCli(['env', 'upgrade', '5', '--name', 'cloud-8.0', '--release', '2', ...labels, '--step-size', 'two', ...endpoint]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('rolling_upgrade.upgradeStepSize');

    const upgraded = await runCli([
      'env',
      'upgrade',
      '5',
      '--name',
      'cloud-8.0',
      '--release',
      '2',
      ...labels,
      '--step-size',
      '2',
      '--wait',
      '--poll-ms',
      '50',
      ...endpoint,
    ]);
    expect(upgraded.code).toBe(0);
    expect(upgraded.stderr.split('\n').filter(Boolean)).toEqual(expect.arrayContaining(['CONTROLLERS', 'NODES', 'COMPLETE']));
    expect(upgraded.stdout).toMatch(
      /environment upgrade \S+: environment 5 -> seed 7\tREADY\tCOMPLETE\tcontrollers READY \(2 upgraded, 0 failed of 2\)\tnodes READY \(3 upgraded, 0 failed of 3\)/,
    );
    expect(upgraded.stdout).toContain('Environment Upgrade Completed: 3 node(s) upgraded and moved to upgrade seed 7');

    const id = /environment upgrade (\S+):/.exec(upgraded.stdout)![1]!;
    const status = await runCli(['env', 'status', id, '--json', ...endpoint]);
    expect(JSON.parse(status.stdout)).toMatchObject({ upgradeId: id, state: 'READY', seedId: 7 });

    // Ended, a delete removes it (CRUS); then it is gone.
    const deleted = await runCli(['env', 'delete', id, ...endpoint]);
    expect({ code: deleted.code, stdout: deleted.stdout }).toEqual({ code: 0, stdout: `environment upgrade ${id} removed (it had ended READY)\n` });
    const gone = await runCli(['env', 'status', id, ...endpoint]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(`no session with id '${id}'`);
  }, 180_000);
});
