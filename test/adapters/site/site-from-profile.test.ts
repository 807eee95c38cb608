import { FileInventory } from '../../../adapters/site/file-inventory';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createSiteFromProfile, loadSiteProfileFile, resolveSecretReference } from '../../../adapters/site';
import { InvalidInputError } from '../../../core/errors';
import { parseSiteProfile } from '../../../core/site/site-profile';
import { memoryConnectorState } from '../../support/connector-state';
import { startTestSite, type TestSite } from '../../support/simulator';

describe('createSiteFromProfile', () => {
  let t: TestSite;
  beforeAll(async () => {
    t = await startTestSite({ nodes: [{ name: 'n1', nid: 1 }], groups: { all: ['n1'] }, bootTemplates: ['cos'] });
  });
  afterAll(() => t.close());

  const httpProfile = () =>
    parseSiteProfile({
      workloadManager: { type: 'slurmrestd', url: t.site.urls.slurmrestd, apiVersion: 'v0.0.42', token: { env: 'TEST_SLURM_JWT' } },
      bootService: { type: 'bos', url: t.site.urls.bos },
      // The simulated site's nodes (n1) are not xnames, and its Slurm names them the same way.
      inventory: { type: 'hsm', url: t.site.urls.hsm, xnames: false },
      nodeNames: { workloadManager: 'same' },
      provisioner: { type: 'http', url: t.site.urls.provisioner },
      allowInsecureHttp: true,
    });

  it('builds working HTTP connectors, resolving tokens through the given resolver', async () => {
    const asked: string[] = [];
    const { site, provisioner } = await createSiteFromProfile(httpProfile(), {
      resolveSecret: async (reference, field) => {
        asked.push(`${field}=${reference.env}`);
        return 'jwt';
      },
    });
    expect(asked).toEqual(['workloadManager.token=TEST_SLURM_JWT']);
    await expect(site.workloadManager.getNodes(['n1'])).resolves.toHaveProperty('size', 1);
    await expect(site.bootService.templateExists('cos')).resolves.toBe(true);
    await expect(site.inventory.getGroupMembers('all')).resolves.toEqual(['n1']);
    await expect(provisioner!.getAction('none')).resolves.toBeUndefined();
  });

  it('names the field of a type this build has no connector for, and takes registered builders', async () => {
    const profile = parseSiteProfile({ ...httpProfile(), workloadManager: { type: 'scontrol', transport: { type: 'local' } }, provisioner: undefined });
    // A type no builder knows (the schema lets none through; a forged profile does).
    const unknownType = { ...profile, workloadManager: { type: 'pbs' } } as unknown as typeof profile;
    const err = await createSiteFromProfile(unknownType, { resolveSecret: async () => 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as Error).message).toBe("Invalid site profile: workloadManager.type: no 'pbs' connector is available in this build");

    const fake = {
      getNodes: async () => new Map(),
      drain: async () => {},
      resume: async () => {},
      fail: async () => {},
      drainNodes: async () => {},
      resumeNodes: async () => {},
      failNodes: async () => {},
      clearReasons: async () => {},
    };
    const seen: unknown[] = [];
    const { site, provisioner } = await createSiteFromProfile(profile, {
      connectors: {
        workloadManager: {
          scontrol: (config, context) => {
            seen.push(context.transport(config));
            return fake;
          },
        },
      },
    });
    expect(site.workloadManager).toBe(fake);
    expect(seen).toEqual([{ type: 'local' }]);
    expect(provisioner).toBeUndefined();
  });

  it('gives slurm-reboot and the command provisioner the connector state; without one they refuse to act, and the rest still works', async () => {
    const profile = parseSiteProfile({
      transport: { type: 'local' },
      workloadManager: { type: 'scontrol' },
      bootService: { type: 'slurm-reboot' },
      inventory: { type: 'hsm', url: t.site.urls.hsm, xnames: false },
      nodeNames: { workloadManager: 'same' },
      provisioner: { type: 'command', commands: { prepare: 'true {nodes}', deploy: 'true {nodes}' } },
      allowInsecureHttp: true,
    });
    const connectorState = memoryConnectorState();
    const { provisioner } = await createSiteFromProfile(profile, { connectorState });
    await provisioner!.startAction({ name: 'a1', action: 'prepare', nodes: ['n1'] });
    // The action is in the state given (over SSM a fresh provisioner finds it there: test/workflows/group-deployment/over-ssm.test.ts).
    expect(await connectorState.records('command-provisioner').get('a1')).toMatchObject({ name: 'a1', action: 'prepare', nodes: ['n1'] });

    const without = await createSiteFromProfile(profile);
    await expect(without.site.inventory.getGroupMembers('all')).resolves.toEqual(['n1']);
    await expect(without.site.bootService.getSession('s')).rejects.toThrow(
      /slurm-reboot connector keeps its records in the rollout table, and this caller gave it none/,
    );
    await expect(without.provisioner!.getAction('a1')).rejects.toThrow(/command-provisioner connector keeps its records/);
  });
});

describe('resolveSecretReference', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'secret-'));
    await writeFile(path.join(dir, 'token'), ' from-file \n');
    await writeFile(path.join(dir, 'empty'), '\n');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads environment variables, files relative to the profile, and secrets by ARN', async () => {
    await expect(resolveSecretReference({ env: 'T' }, 'f', { env: { T: 'from-env' } })).resolves.toBe('from-env');
    await expect(resolveSecretReference({ file: 'token' }, 'f', { baseDir: dir })).resolves.toBe('from-file');
    const arn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:slurm-AbCdEf';
    await expect(resolveSecretReference({ secretArn: arn }, 'f', { getSecret: async (a) => (a === arn ? 'from-secret' : undefined) })).resolves.toBe(
      'from-secret',
    );
  });

  it.each([
    [{ env: 'UNSET_VAR' }, 'workloadManager.token: environment variable UNSET_VAR is not set'],
    [{ file: 'missing' }, 'workloadManager.token: cannot read'],
    [{ file: 'empty' }, 'workloadManager.token: '],
    [
      { secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:x' },
      'workloadManager.token: secret arn:aws:secretsmanager:us-east-1:123456789012:secret:x has no SecretString',
    ],
  ])('reports %j with the field', async (reference, expected) => {
    const err = await resolveSecretReference(reference, 'workloadManager.token', { env: {}, baseDir: dir, getSecret: async () => undefined }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).problems.map((p) => `${p.field}: ${p.message}`)[0]).toContain(expected);
  });
});

describe('examples/profiles', () => {
  it.each(['cray-csm.yaml', 'slurm-warewulf.yaml', 'slurm-xcat.yaml'])('%s is a valid profile', async (file) => {
    const { profile } = await loadSiteProfileFile(path.join(__dirname, '..', '..', '..', 'examples', 'profiles', file));
    expect(profile.workloadManager.type).toMatch(/^(slurmrestd|scontrol)$/);
  });

  it("slurm-xcat.yaml's file inventory ships beside it and reads", async () => {
    const file = path.join(__dirname, '..', '..', '..', 'examples', 'profiles', 'slurm-xcat.yaml');
    const { profile } = await loadSiteProfileFile(file);
    expect(profile.inventory).toEqual({ type: 'file', path: 'inventory.yaml' });
    const inventory = new FileInventory({ path: path.join(path.dirname(file), 'inventory.yaml'), writeBack: false });
    await expect(inventory.getGroupMembers('compute-nodes')).resolves.toEqual(['cn001', 'cn002', 'cn003', 'cn004']);
    expect((await inventory.listNodes()).map((n) => n.rack)).toEqual(['r01', 'r01', 'r02', 'r02']);
  });
});
