import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as environmentUpgradeEntry from '../../../lambdas/entrypoints/environment-upgrade';
import * as groupDeploymentEntry from '../../../lambdas/entrypoints/group-deployment';
import * as rollingUpgradeEntry from '../../../lambdas/entrypoints/rolling-upgrade';
import * as taskGraphEntry from '../../../lambdas/entrypoints/task-graph';
import {
  ENVIRONMENT,
  ENVIRONMENT_UPGRADE_FUNCTION_NAMES,
  GROUP_DEPLOYMENT_FUNCTION_NAMES,
  ROLLING_UPGRADE_FUNCTION_NAMES,
  TASK_GRAPH_FUNCTION_NAMES,
} from '../../../contracts';
import {
  dependenciesFromEnvironment,
  groupDeploymentDependenciesFromEnvironment,
  loadBootAndInventory,
  loadEnvironmentUpgradeDependencies,
  loadGroupDeploymentDependencies,
  loadRollingUpgradeDependencies,
  loadTaskGraphDependencies,
  siteTokens,
} from '../../../lambdas/entrypoints/environment';

// What the stack relies on in the deployed code: one export per Lambda (handler `index.<Name>`),
// and the meaning of the environment variables it sets.

describe('deployed entries', () => {
  it.each([
    ['rolling-upgrade', rollingUpgradeEntry as Record<string, unknown>, ROLLING_UPGRADE_FUNCTION_NAMES],
    ['group-deployment', groupDeploymentEntry as Record<string, unknown>, GROUP_DEPLOYMENT_FUNCTION_NAMES],
    ['task-graph', taskGraphEntry as Record<string, unknown>, TASK_GRAPH_FUNCTION_NAMES],
    ['environment-upgrade', environmentUpgradeEntry as Record<string, unknown>, ENVIRONMENT_UPGRADE_FUNCTION_NAMES],
  ] as const)('%s exports one handler per function name, and nothing else', (_, entry, names) => {
    expect(Object.keys(entry).sort()).toEqual([...names].sort());
    for (const name of names) expect(typeof entry[name]).toBe('function');
  });
});

describe('dependencies from the environment', () => {
  let server: Server;
  let url: string;
  const seen: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    // Answers 404 to everything: enough for a client to send one request and settle.
    server = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen.length = 0;
  });

  // The test servers speak http: a lab, as far as the functions can tell.
  const groupEnvironment = (extra: Record<string, string> = {}) => ({
    [ENVIRONMENT.tableName]: 'table',
    [ENVIRONMENT.allowInsecureHttp]: 'true',
    [ENVIRONMENT.inventoryUrl]: url,
    [ENVIRONMENT.provisionerUrl]: url,
    ...extra,
  });
  const rollingEnvironment = (extra: Record<string, string> = {}) => ({
    [ENVIRONMENT.tableName]: 'table',
    [ENVIRONMENT.allowInsecureHttp]: 'true',
    [ENVIRONMENT.workloadManagerUrl]: url,
    [ENVIRONMENT.bootServiceUrl]: url,
    [ENVIRONMENT.inventoryUrl]: url,
    ...extra,
  });

  it('group deployment: needs PROVISIONER_URL', () => {
    const { [ENVIRONMENT.provisionerUrl]: _, ...withoutProvisioner } = groupEnvironment();
    expect(() => groupDeploymentDependenciesFromEnvironment(withoutProvisioner)).toThrow('PROVISIONER_URL: is not set');
  });

  it('group deployment: sends SITE_API_TOKEN as a Bearer token to HSM and the provisioner', async () => {
    const deps = groupDeploymentDependenciesFromEnvironment(groupEnvironment({ [ENVIRONMENT.siteApiToken]: 't0k3n' }));
    await deps.inventory.getGroupMembers('compute').catch(() => undefined);
    await deps.provisioner.getAction('deploy-1');
    expect(seen.map((headers) => headers.authorization)).toEqual(['Bearer t0k3n', 'Bearer t0k3n']);
  });

  it('group deployment: an empty SITE_API_TOKEN sends no token', async () => {
    const deps = groupDeploymentDependenciesFromEnvironment(groupEnvironment({ [ENVIRONMENT.siteApiToken]: '' }));
    await deps.provisioner.getAction('deploy-1');
    expect(seen).toHaveLength(1);
    expect(seen[0]).not.toHaveProperty('authorization');
  });

  it('rolling upgrade: sends SITE_API_TOKEN as a Bearer token to HSM and BOS', async () => {
    const { site } = dependenciesFromEnvironment(rollingEnvironment({ [ENVIRONMENT.siteApiToken]: 't0k3n' }));
    await site.inventory.getGroupMembers('compute').catch(() => undefined);
    await site.bootService.getSession('session-1').catch(() => undefined);
    expect(seen.map((headers) => headers.authorization)).toEqual(['Bearer t0k3n', 'Bearer t0k3n']);
  });

  it('environment upgrade and the API: BOS and HSM from their URLs, with SITE_API_TOKEN; none of them: the API checks nothing, the upgrade refuses to start', async () => {
    const { site } = await loadEnvironmentUpgradeDependencies(rollingEnvironment({ [ENVIRONMENT.siteApiToken]: 't0k3n' }));
    await site.inventory.getGroupMembers('compute').catch(() => undefined);
    expect(await site.bootService.templateExists('img-2')).toBe(false);
    expect(seen.map((headers) => headers.authorization)).toEqual(['Bearer t0k3n', 'Bearer t0k3n']);
    expect(await loadBootAndInventory({ [ENVIRONMENT.tableName]: 'table' })).toBeUndefined();
    await expect(loadEnvironmentUpgradeDependencies({ [ENVIRONMENT.tableName]: 'table' })).rejects.toThrow(
      /SITE_PROFILE: is not set, nor are BOOT_SERVICE_URL and INVENTORY_URL/,
    );
  });

  it('SITE_PROFILE: builds the site from the profile, its tokens resolved at cold start', async () => {
    const profile = {
      workloadManager: { type: 'slurmrestd', url, token: { env: 'SLURM_JWT' } },
      bootService: { type: 'bos', url },
      inventory: { type: 'hsm', url },
      allowInsecureHttp: true,
    };
    const env = { [ENVIRONMENT.tableName]: 'table', [ENVIRONMENT.siteProfile]: JSON.stringify(profile), SLURM_JWT: 'jwt-from-env' };
    const { site } = await loadRollingUpgradeDependencies(env);
    // An hsm inventory: Slurm's names come from HSM's NID (CSM's nid{nid:06}); the 404 server knows no node, so no Slurm call.
    await expect(site.workloadManager.getNodes(['n1'])).rejects.toThrow();
    seen.length = 0;
    const { site: sameNames } = await loadRollingUpgradeDependencies({
      ...env,
      [ENVIRONMENT.siteProfile]: JSON.stringify({ ...profile, nodeNames: { workloadManager: 'same' } }),
    });
    await sameNames.workloadManager.getNodes(['n1']);
    expect(seen.map((headers) => headers['x-slurm-user-token'])).toEqual(['jwt-from-env']);
    await expect(loadGroupDeploymentDependencies(env)).rejects.toThrow('provisioner: group deployments need a provisioner');
  });

  it('the tokens whose secret ARNs the stack sets are read when their connector is first used, each only by a function that calls it', async () => {
    const secrets: Record<string, string> = { 'arn:slurm': ' slurm-jwt\n', 'arn:site': 'site-token' };
    const requested: string[] = [];
    const getSecret = async (arn: string) => (requested.push(arn), secrets[arn]);
    const env = rollingEnvironment({ [ENVIRONMENT.slurmTokenSecretArn]: 'arn:slurm', [ENVIRONMENT.siteApiTokenSecretArn]: 'arn:site' });
    const tokens = await siteTokens(env, { getSecret });
    // Building the connectors reads no secret: a function that never calls Slurm never reads (nor may read) its JWT.
    expect(requested).toEqual([]);
    // NODE_NAMES same: n1 goes to Slurm as it is (the default would read HSM's nids first).
    const { site } = dependenciesFromEnvironment({ ...env, [ENVIRONMENT.nodeNames]: 'same' }, tokens);
    await site.workloadManager.getNodes(['n1']).catch(() => undefined);
    expect(requested).toEqual(['arn:slurm']);
    await site.inventory.getGroupMembers('compute').catch(() => undefined);
    expect(requested).toEqual(['arn:slurm', 'arn:site']);
    expect(seen.map((headers) => [headers['x-slurm-user-token'], headers.authorization])).toEqual([
      ['slurm-jwt', undefined],
      [undefined, 'Bearer site-token'],
    ]);
  });

  it('an empty secret ARN (no site API secret) reads nothing; an unreadable secret names its variable', async () => {
    const getSecret = async () => {
      throw new Error('AccessDeniedException');
    };
    await expect(siteTokens(rollingEnvironment({ [ENVIRONMENT.siteApiTokenSecretArn]: '' }), { getSecret })).resolves.toEqual({});
    // NODE_NAMES same: the first call is Slurm's (the default would read HSM's nids first).
    const env = rollingEnvironment({ [ENVIRONMENT.slurmTokenSecretArn]: 'arn:slurm', [ENVIRONMENT.nodeNames]: 'same' });
    const { site } = dependenciesFromEnvironment(env, await siteTokens(env, { getSecret }));
    // The call that first needs it fails, naming the variable (a function not granted the secret: AccessDenied).
    await expect(site.workloadManager.getNodes(['n1'])).rejects.toThrow(/SLURM_TOKEN_SECRET_ARN: cannot read secret arn:slurm: AccessDeniedException/);
  });

  it('task graph: with a profile, shell tasks reach the nodes through its transport; without one, only reboot, drain and resume run', async () => {
    const profile = {
      workloadManager: { type: 'slurmrestd', url },
      bootService: { type: 'bos', url },
      inventory: { type: 'hsm', url },
      tasks: { transport: { type: 'ssm', instanceIds: ['i-0123456789abcdef0'], region: 'eu-west-1' }, nodeExec: 'ssh {node} {command}' },
    };
    const withProfile = await loadTaskGraphDependencies({ [ENVIRONMENT.tableName]: 'table', [ENVIRONMENT.siteProfile]: JSON.stringify(profile) });
    expect(withProfile.executor.unsupported('shell')).toBeUndefined();
    const fromVariables = await loadTaskGraphDependencies(rollingEnvironment());
    expect(fromVariables.executor.unsupported('shell')).toMatch(/no command transport reaches the nodes/);
    expect(fromVariables.executor.unsupported('reboot')).toBeUndefined();
    await fromVariables.inventory.listNodes().catch(() => undefined);
    expect(seen).toHaveLength(1);
  });

  it('a rotated secret reaches a warm container: kept for 5 minutes (Powertools maxAge), read afresh at once when the site answers 401', async () => {
    let valid = 'token-1';
    const used: (string | undefined)[] = [];
    const strict = createServer((req, res) => {
      used.push(req.headers.authorization);
      res.writeHead(req.headers.authorization === `Bearer ${valid}` ? 404 : 401, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => strict.listen(0, '127.0.0.1', resolve));
    const strictUrl = `http://127.0.0.1:${(strict.address() as AddressInfo).port}`;
    try {
      // Powertools' cache, as the provider keeps it: the stored value until maxAge runs out or forceFetch.
      const stored: Record<string, string> = { 'arn:site': 'token-1' };
      let cached: string | undefined;
      const reads: { maxAge: number; forceFetch: boolean }[] = [];
      const getSecret = async (arn: string, options: { maxAge: number; forceFetch: boolean }) => {
        reads.push(options);
        if (options.forceFetch || cached === undefined) cached = stored[arn];
        return cached;
      };
      const env = {
        [ENVIRONMENT.tableName]: 'table',
        [ENVIRONMENT.allowInsecureHttp]: 'true',
        [ENVIRONMENT.inventoryUrl]: strictUrl,
        [ENVIRONMENT.provisionerUrl]: strictUrl,
        [ENVIRONMENT.siteApiTokenSecretArn]: 'arn:site',
      };
      const { provisioner } = groupDeploymentDependenciesFromEnvironment(env, await siteTokens(env, { getSecret }));
      await expect(provisioner.getAction('deploy-1')).resolves.toBeUndefined();

      // The secret is rotated: the site takes only the new token. One 401, one fresh read, and the call goes through.
      stored['arn:site'] = 'token-2';
      valid = 'token-2';
      await expect(provisioner.getAction('deploy-1')).resolves.toBeUndefined();
      expect(used).toEqual(['Bearer token-1', 'Bearer token-1', 'Bearer token-2']);
      expect(reads).toEqual([
        { maxAge: 300, forceFetch: false },
        { maxAge: 300, forceFetch: false },
        { maxAge: 300, forceFetch: true },
      ]);

      // A token that stays refused is an error after the one retry, not a loop.
      valid = 'token-3';
      await expect(provisioner.getAction('deploy-1')).rejects.toMatchObject({ name: 'SiteServiceError', status: 401 });
      expect(used).toHaveLength(5);
    } finally {
      await new Promise<void>((resolve) => strict.close(() => resolve()));
    }
  });

  it('refuses to send a token over http:// unless the stack says this is a lab (ALLOW_INSECURE_HTTP), naming the variable', async () => {
    const { [ENVIRONMENT.allowInsecureHttp]: _, ...production } = rollingEnvironment({ [ENVIRONMENT.siteApiToken]: 't0k3n' });
    expect(() => dependenciesFromEnvironment(production)).toThrow(
      /BOOT_SERVICE_URL: a token is only sent over https, not to http:\/\/127\.0\.0\.1:\d+ \(ALLOW_INSECURE_HTTP=true in a lab\)/,
    );
    expect(() => dependenciesFromEnvironment({ ...production, [ENVIRONMENT.slurmToken]: 'jwt', [ENVIRONMENT.siteApiToken]: '' })).toThrow(
      /WORKLOAD_MANAGER_URL: a token is only sent over https/,
    );
    const { [ENVIRONMENT.allowInsecureHttp]: __, ...groupProduction } = groupEnvironment({ [ENVIRONMENT.siteApiToken]: 't0k3n' });
    expect(() => groupDeploymentDependenciesFromEnvironment(groupProduction)).toThrow(/INVENTORY_URL: a token is only sent over https/);
    // No token, nothing to protect; https is always fine.
    expect(() => dependenciesFromEnvironment({ ...production, [ENVIRONMENT.siteApiToken]: '' })).not.toThrow();
    expect(() =>
      groupDeploymentDependenciesFromEnvironment({
        ...groupProduction,
        [ENVIRONMENT.inventoryUrl]: 'https://hsm',
        [ENVIRONMENT.provisionerUrl]: 'https://prov',
      }),
    ).not.toThrow();
  });

  it("NODE_NAMES: Slurm's names from HSM's NID, CSM's nid{nid:06} by default; a bad pattern names the variable", async () => {
    const paths: string[] = [];
    const csm = createServer((req, res) => {
      paths.push(req.url!);
      if (req.url!.startsWith('/hsm/v2/State/Components')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ Components: [{ ID: 'x3000c0s19b1n0', Type: 'Node', NID: 6 }] }));
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => csm.listen(0, '127.0.0.1', resolve));
    const csmUrl = `http://127.0.0.1:${(csm.address() as AddressInfo).port}`;
    try {
      const env = rollingEnvironment({ [ENVIRONMENT.workloadManagerUrl]: csmUrl, [ENVIRONMENT.inventoryUrl]: csmUrl });
      await dependenciesFromEnvironment(env).site.workloadManager.getNodes(['x3000c0s19b1n0']);
      expect(paths).toEqual(['/hsm/v2/State/Components?type=Node&nidonly=true', '/slurm/v0.0.42/node/nid000006']);
      paths.length = 0;
      await dependenciesFromEnvironment({ ...env, [ENVIRONMENT.nodeNames]: 'node{nid}' }).site.workloadManager.getNodes(['x3000c0s19b1n0']);
      expect(paths).toEqual(['/hsm/v2/State/Components?type=Node&nidonly=true', '/slurm/v0.0.42/node/node6']);
      paths.length = 0;
      await dependenciesFromEnvironment({ ...env, [ENVIRONMENT.nodeNames]: 'same' }).site.workloadManager.getNodes(['x3000c0s19b1n0']);
      expect(paths).toEqual(['/slurm/v0.0.42/node/x3000c0s19b1n0']);
    } finally {
      await new Promise<void>((resolve) => csm.close(() => resolve()));
    }
    expect(() => dependenciesFromEnvironment(rollingEnvironment({ [ENVIRONMENT.nodeNames]: 'nid' }))).toThrow(/NODE_NAMES: 'same' or must hold \{nid\}/);
  });

  it('SITE_PROFILE: a bad profile is reported with its path', async () => {
    const env = { [ENVIRONMENT.tableName]: 'table', [ENVIRONMENT.siteProfile]: JSON.stringify({ workloadManager: { type: 'slurmrestd', url: 'nope' } }) };
    await expect(loadRollingUpgradeDependencies(env)).rejects.toThrow(/workloadManager\.url: must be an http:\/\/ or https:\/\/ URL/);
    await expect(loadRollingUpgradeDependencies({ [ENVIRONMENT.siteProfile]: '{' })).rejects.toThrow(/SITE_PROFILE: is not JSON/);
  });
});
