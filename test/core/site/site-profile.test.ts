import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { InvalidInputError } from '../../../core/errors';
import { parseSiteProfile, siteProfileJsonSchema, transportFor } from '../../../core/site/site-profile';

/**
 * schemas/site-profile.schema.json is generated from the zod schema; this test keeps them from
 * drifting. After changing the zod schema, regenerate with:
 *   UPDATE_SCHEMAS=1 npx jest test/core/site/site-profile.test.ts
 */
const SCHEMA_FILE = path.join(__dirname, '..', '..', '..', 'schemas', 'site-profile.schema.json');

const CSM = {
  workloadManager: { type: 'slurmrestd', url: 'https://slurm:6820', apiVersion: 'v0.0.41', user: 'root', token: { env: 'SLURM_JWT' } },
  bootService: { type: 'bos', url: 'https://api-gw/apis/bos', token: { file: '/run/token' } },
  inventory: { type: 'hsm', url: 'https://api-gw/apis/smd' },
  provisioner: { type: 'http', url: 'https://provisioner' },
};
const SSM = { type: 'ssm', instanceIds: ['i-0abc12345678'], region: 'us-east-1' };
const WAREWULF = {
  transport: SSM,
  workloadManager: { type: 'scontrol' },
  bootService: { type: 'slurm-reboot', prepareCommand: 'wwctl node set --yes --image {template} {nodes}' },
  inventory: { type: 'slurm' },
  provisioner: { type: 'command', commands: { prepare: 'site-prepare {nodes}', deploy: 'site-deploy {nodes}' } },
};

function problemsOf(input: unknown): string[] {
  try {
    parseSiteProfile(input);
  } catch (err) {
    if (err instanceof InvalidInputError) return err.problems.map((p) => `${p.field}: ${p.message}`);
    throw err;
  }
  throw new Error('the profile was accepted');
}

describe('site profile', () => {
  it('accepts the shapes of the issue, with defaults', () => {
    expect(parseSiteProfile(CSM)).toMatchObject({ workloadManager: { apiVersion: 'v0.0.41' }, allowInsecureHttp: false });
    const { workloadManager: _w, ...rest } = CSM;
    // The default is a version every Slurm from 24.11 to 26.05 still serves.
    expect(parseSiteProfile({ ...rest, workloadManager: { type: 'slurmrestd', url: 'https://s' } }).workloadManager).toMatchObject({ apiVersion: 'v0.0.42' });
    for (const apiVersion of ['v0.0.39', 'v0.0.40', 'v0.0.43', 'v0.0.44', 'v0.0.45']) {
      expect(parseSiteProfile({ ...CSM, workloadManager: { ...CSM.workloadManager, apiVersion } }).workloadManager).toMatchObject({ apiVersion });
    }
    const warewulf = parseSiteProfile(WAREWULF);
    expect(transportFor(warewulf, warewulf.bootService as { transport?: never })).toEqual(SSM);
    const local = parseSiteProfile({
      ...WAREWULF,
      transport: undefined,
      workloadManager: { type: 'scontrol', transport: { type: 'local' } },
      bootService: { type: 'slurm-reboot', transport: { type: 'local' } },
      inventory: { type: 'file', path: 'inventory.yaml' },
      provisioner: undefined,
    });
    expect(local.workloadManager).toEqual({ type: 'scontrol', transport: { type: 'local' } });
  });

  it.each([
    [
      'an unknown connector type',
      { ...CSM, workloadManager: { type: 'slurmrest', url: 'https://s' } },
      'workloadManager.type: type must be slurmrestd or scontrol',
    ],
    ['a missing service', { workloadManager: CSM.workloadManager, bootService: CSM.bootService }, 'inventory: '],
    ['a URL that is not one', { ...CSM, bootService: { type: 'bos', url: 'api-gw/apis/bos' } }, 'bootService.url: must be an http:// or https:// URL'],
    [
      'a token over plain http',
      { ...CSM, inventory: { type: 'hsm', url: 'http://api-gw/apis/smd', token: { env: 'T' } } },
      'inventory.url: a token is only sent over https (set allowInsecureHttp: true in a lab)',
    ],
    [
      'a token given two ways',
      { ...CSM, bootService: { type: 'bos', url: 'https://b', token: { env: 'T', file: 'f' } } },
      'bootService.token: give exactly one of env, file, secretArn',
    ],
    ['a token given inline', { ...CSM, bootService: { type: 'bos', url: 'https://b', token: 'eyJhbGciOi' } }, 'bootService.token: '],
    [
      'a secretArn that is not one',
      { ...CSM, bootService: { type: 'bos', url: 'https://b', token: { secretArn: 'arn:aws:s3:::bucket' } } },
      'bootService.token.secretArn: must be the ARN of a Secrets Manager secret',
    ],
    [
      'an unknown Slurm API version',
      { ...CSM, workloadManager: { ...CSM.workloadManager, apiVersion: 'v0.0.46' } },
      'workloadManager.apiVersion: must be one of v0.0.39, v0.0.40, v0.0.41, v0.0.42, v0.0.43, v0.0.44, v0.0.45',
    ],
    [
      "Slurm 22.05's slurmrestd, which cannot update nodes",
      { ...CSM, workloadManager: { ...CSM.workloadManager, apiVersion: 'v0.0.38' } },
      "workloadManager.apiVersion: v0.0.38 cannot update nodes (Slurm 22.05's slurmrestd serves GET /slurm/v0.0.38/node/{name} only: no drain, resume or fail); use workloadManager: {type: scontrol}",
    ],
    ['an unknown key', { ...CSM, inventory: { type: 'hsm', url: 'https://h', user: 'x' } }, 'inventory.user: unknown key'],
    [
      'a command connector without a transport',
      { ...WAREWULF, transport: undefined },
      'workloadManager.transport: a scontrol connector needs a transport (here or at the top level)',
    ],
    [
      'a bad instance id',
      { ...WAREWULF, transport: { ...SSM, instanceIds: ['i-0abc; reboot'] } },
      'transport.instanceIds[0]: must be an EC2 or managed instance id',
    ],
    [
      'more than 50 instances',
      { ...WAREWULF, transport: { ...SSM, instanceIds: Array.from({ length: 51 }, (_, i) => `i-${String(i).padStart(8, '0')}`) } },
      'transport.instanceIds: SSM sends a command to at most 50 instances by id',
    ],
    ['a bad region', { ...WAREWULF, transport: { ...SSM, region: 'mars' } }, 'transport.region: must be an AWS region such as us-east-1'],
    [
      'an unknown transport',
      { ...WAREWULF, transport: { type: 'ssh', host: 'head' } },
      'transport.type: must be {type: ssm, instanceIds, region} or {type: local}',
    ],
    [
      'an unknown placeholder',
      { ...WAREWULF, bootService: { type: 'slurm-reboot', prepareCommand: 'wwctl node set --image {image} {nodes}' } },
      'bootService.prepareCommand: unknown placeholder {image}: use {template}, {nodes}',
    ],
    ['a provisioner command missing', { ...WAREWULF, provisioner: { type: 'command', commands: { prepare: 'p {nodes}' } } }, 'provisioner.commands.deploy: '],
    ['a file inventory without a path', { ...CSM, inventory: { type: 'file' } }, 'inventory.path: '],
    ['a node-exec form without the command', { ...WAREWULF, tasks: { nodeExec: 'pdsh -w {nodes}' } }, 'tasks.nodeExec: must place the command: {command}'],
    [
      'a node-exec form naming the nodes twice',
      { ...WAREWULF, tasks: { nodeExec: 'pdsh -w {nodes} ssh {node} {command}' } },
      'tasks.nodeExec: must name the nodes once',
    ],
    ['a node-exec form naming no node', { ...WAREWULF, tasks: { nodeExec: 'sh -c {command}' } }, 'tasks.nodeExec: must name the nodes once'],
    [
      'a node-exec placeholder it does not know',
      { ...WAREWULF, tasks: { nodeExec: 'ssh {user}@{node} {command}' } },
      'tasks.nodeExec: unknown placeholder {user}: use {nodes}, {node}, {command}',
    ],
    [
      'a role key that is not a feature key',
      { ...WAREWULF, inventory: { type: 'slurm', roleKey: 'role:' } },
      'inventory.roleKey: roleKey must be a feature key',
    ],
    [
      'a relative program path',
      { ...WAREWULF, commandPaths: { scontrol: 'bin/scontrol' } },
      'commandPaths.scontrol: must be an absolute path such as /opt/slurm/bin/scontrol',
    ],
    [
      'a program path with shell characters',
      { ...WAREWULF, commandPaths: { sinfo: '/opt/slurm/bin/sinfo; id' } },
      'commandPaths.sinfo: must be an absolute path',
    ],
    ['an unknown program', { ...WAREWULF, commandPaths: { sbatch: '/opt/slurm/bin/sbatch' } }, 'commandPaths.sbatch: unknown key'],
    // A key at the wrong level says where it belongs.
    ['a key of tasks at the top level', { ...WAREWULF, nodeExec: 'ssh {node} {command}' }, "nodeExec: unknown key: 'nodeExec' belongs under 'tasks'"],
    [
      'a top-level key under a service',
      { ...WAREWULF, workloadManager: { type: 'scontrol', commandPaths: { scontrol: '/opt/slurm/bin/scontrol' } } },
      "workloadManager.commandPaths: unknown key: 'commandPaths' belongs at the top level",
    ],
    [
      'a program path beside the connector',
      { ...WAREWULF, inventory: { type: 'slurm', sinfo: '/opt/slurm/bin/sinfo' } },
      "inventory.sinfo: unknown key: 'sinfo' belongs under 'commandPaths'",
    ],
    [
      "another type's key",
      { ...CSM, bootService: { ...CSM.bootService, transport: { type: 'local' } } },
      "bootService.transport: unknown key (taken here only by another type): 'transport' belongs at the top level or under 'workloadManager', 'inventory', 'provisioner' or 'tasks'",
    ],
  ])('reports %s with its path', (_case, profile, expected) => {
    expect(problemsOf(profile).some((p) => p.startsWith(expected))).toBe(true);
  });

  it("reaches the nodes through pdsh by default, through the profile's transport unless the tasks name their own", () => {
    expect(parseSiteProfile(WAREWULF).tasks).toBeUndefined();
    expect(parseSiteProfile({ ...WAREWULF, tasks: {} }).tasks).toEqual({ nodeExec: 'pdsh -S -w {nodes} {command}', fanout: 256 });
    const own = parseSiteProfile({ ...CSM, tasks: { transport: { type: 'local' }, nodeExec: 'ssh -o BatchMode=yes {node} {command}' } });
    expect(own.tasks).toEqual({ transport: { type: 'local' }, nodeExec: 'ssh -o BatchMode=yes {node} {command}', fanout: 256 });
  });

  it('lets tokens travel over http only with allowInsecureHttp', () => {
    const lab = { ...CSM, workloadManager: { ...CSM.workloadManager, url: 'http://127.0.0.1:6820' } };
    expect(problemsOf(lab)).toEqual(['workloadManager.url: a token is only sent over https (set allowInsecureHttp: true in a lab)']);
    expect(parseSiteProfile({ ...lab, allowInsecureHttp: true }).allowInsecureHttp).toBe(true);
  });
});

describe('schemas/site-profile.schema.json', () => {
  const generated = siteProfileJsonSchema();
  if (process.env.UPDATE_SCHEMAS === '1') writeFileSync(SCHEMA_FILE, `${JSON.stringify(generated, null, 2)}\n`);

  it('equals the schema generated from the zod definition', () => {
    expect(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8'))).toEqual(generated);
  });

  it('names every connector type and keeps unknown keys out', () => {
    const text = JSON.stringify(generated);
    for (const type of ['slurmrestd', 'scontrol', 'bos', 'slurm-reboot', 'hsm', 'slurm', 'file', 'http', 'command', 'ssm', 'local']) {
      expect(text).toContain(`"const":"${type}"`);
    }
    expect(text).toContain('"required":["workloadManager","bootService","inventory"]');
    expect(text.match(/"additionalProperties":false/g)?.length).toBeGreaterThanOrEqual(12);
  });
});
