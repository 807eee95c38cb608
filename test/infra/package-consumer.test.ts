import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../contracts';
import { TABLE_USERS_OF_EVERY_STACK } from './table-grants.specs';

const run = promisify(execFile);

/**
 * The construct as another CDK app gets it: `npm pack` of this package (built by scripts/build-infra.mjs),
 * unpacked into the app's node_modules beside its dependencies (as `npm install <tarball>` lays them
 * out, aws-cdk-lib and constructs being the app's own), the README sample (examples/cdk-app/my-stack.ts)
 * importing `baremetal-rollout/infra`, type-checked with NodeNext resolution and synthesized.
 */
describe('baremetal-rollout/infra from outside the repository', () => {
  let app: string;
  beforeAll(async () => {
    app = await mkdtemp(path.join(os.tmpdir(), 'rollout-consumer-'));
    await run(process.execPath, [path.join(PROJECT_ROOT, 'scripts', 'build-infra.mjs')], { cwd: PROJECT_ROOT });
    const npm = process.env.npm_execpath;
    const pack = npm
      ? ([process.execPath, [npm, 'pack', '--ignore-scripts', '--json', '--pack-destination', app]] as const)
      : (['npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', app]] as const);
    const { stdout } = await run(pack[0], [...pack[1]], { cwd: PROJECT_ROOT, maxBuffer: 64 * 1024 * 1024 });
    const { filename } = (JSON.parse(stdout) as { filename: string }[])[0]!;

    const modules = path.join(app, 'node_modules');
    await mkdir(modules);
    await run('tar', ['-xzf', path.join(app, path.basename(filename)), '-C', modules]);
    await rename(path.join(modules, 'package'), path.join(modules, 'baremetal-rollout'));
    // Its dependencies and the app's (aws-cdk-lib, constructs, typescript, tsx), hoisted beside it.
    for (const entry of await readdir(path.join(PROJECT_ROOT, 'node_modules'))) {
      if (entry.startsWith('.')) continue;
      await symlink(path.join(PROJECT_ROOT, 'node_modules', entry), path.join(modules, entry));
    }

    const sample = await readFile(path.join(PROJECT_ROOT, 'examples', 'cdk-app', 'my-stack.ts'), 'utf8');
    const importLine = /^(import .*) from '\.\.\/\.\.\/infra';$/m;
    expect(sample).toMatch(importLine);
    await writeFile(path.join(app, 'my-stack.ts'), sample.replace(importLine, "$1 from 'baremetal-rollout/infra';"));
    await writeFile(
      path.join(app, 'app.ts'),
      `import { App, Stack } from 'aws-cdk-lib';
import { Vpc } from 'aws-cdk-lib/aws-ec2';
import type { Construct } from 'constructs';
import { parseSiteProfile, RolloutWorkflows } from 'baremetal-rollout/infra';
import { MyHpcStack } from './my-stack.js';

// Bundling off: it runs esbuild over the shipped lambdas/ for a minute and changes nothing looked at here.
const app = new App({ outdir: process.argv[2], context: { 'aws:cdk:bundling-stacks': [] } });
const network = new Stack(app, 'Network');
const vpc = Vpc.fromVpcAttributes(network, 'Vpc', { vpcId: 'vpc-0123456789abcdef0', availabilityZones: ['eu-west-1a'], privateSubnetIds: ['subnet-0123456789abcdef0'] });
const siteProfile = parseSiteProfile({ workloadManager: { type: 'scontrol' }, bootService: { type: 'bos', url: 'https://api-gw/apis/bos' }, inventory: { type: 'hsm', url: 'https://api-gw/apis/smd' }, transport: { type: 'ssm', instanceIds: ['i-0123456789abcdef0'], region: 'eu-west-1' } });
new MyHpcStack(app, 'MyHpc', { siteProfile, vpc });
app.synth();

/** Never called: the declarations are the construct's own types, not \`any\` (else the expect-error is unused). */
export function typed(scope: Construct): RolloutWorkflows {
  // @ts-expect-error logRetention is a RetentionDays
  return new RolloutWorkflows(scope, 'Typed', { logRetention: 'forever' });
}
`,
    );
    await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'my-hpc-app', private: true, type: 'module' }));
    await writeFile(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: true,
          noEmit: true,
          types: ['node'],
        },
        include: ['*.ts'],
      }),
    );
  }, 240_000);
  afterAll(() => rm(app, { recursive: true, force: true }));

  it('ships the built construct, its declarations and the files it reads, and neither tests nor the lock file', async () => {
    const shipped = path.join(app, 'node_modules', 'baremetal-rollout');
    const listed = async (dir: string) => (await readdir(path.join(shipped, dir))).sort();
    expect(await listed('dist')).toEqual(expect.arrayContaining(['infra.js', 'types']));
    expect(await listed('statemachines')).toEqual([
      'deploy-group.asl.json',
      'environment-upgrade.asl.json',
      'group-deployment.asl.json',
      'rolling-upgrade.asl.json',
      'run-node-batches.asl.json',
      'task-graph.asl.json',
    ]);
    expect(await listed('lambdas/entrypoints')).toEqual(expect.arrayContaining(['api.ts', 'group-deployment.ts', 'rolling-upgrade.ts', 'task-graph.ts']));
    const top = await listed('.');
    expect(top).not.toContain('test');
    expect(top).not.toContain('package-lock.json');
  });

  it('type-checks the README sample against the declarations (NodeNext resolution)', async () => {
    const tsc = path.join(app, 'node_modules', 'typescript', 'bin', 'tsc');
    const checked = await run(process.execPath, [tsc, '-p', app], { cwd: app }).catch((err: { stdout: string }) => err);
    expect(checked.stdout).toBe('');
  }, 120_000);

  it("synthesizes it: the workflows from the package, the app's aws-cdk-lib", async () => {
    const out = path.join(app, 'cdk.out');
    await run(process.execPath, ['--import', 'tsx', 'app.ts', out], {
      cwd: app,
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    });
    const template = JSON.parse(await readFile(path.join(out, 'MyHpc.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
    };
    const resources = Object.values(template.Resources);
    const machines = resources.filter((r) => r.Type === 'AWS::StepFunctions::StateMachine');
    expect(machines).toHaveLength(6);
    expect(JSON.stringify(machines.map((m) => m.Properties.DefinitionString))).toContain('Cancel Requested');
    // One Lambda per workflow function and the REST API's (TABLE_ACTIONS names each once; its profile asks for no SSM notifications).
    expect(resources.filter((r) => r.Type === 'AWS::Lambda::Function')).toHaveLength(TABLE_USERS_OF_EVERY_STACK.length);
  }, 180_000);
});
