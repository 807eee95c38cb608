import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/** `cdk synth -c KEY=VALUE ...` runs the CDK app (infra/app.ts) with that context: its exit code and stderr. */
async function runApp(context: Record<string, string>, dir: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [path.join(ROOT, 'bin', 'run-ts.js'), 'infra/app.ts'],
      { cwd: ROOT, env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify(context), CDK_OUTDIR: dir } },
      (_err, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
    );
  });
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-app-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A profile that is not one is said as the CLI says it, one `error:` line, no stack. */
it('refuses a bad site profile with one error: line, exit 2, saying where a misplaced key belongs', async () => {
  const profile = path.join(dir, 'site.yaml');
  await writeFile(
    profile,
    'transport: {type: local}\nworkloadManager: {type: scontrol}\nbootService: {type: slurm-reboot}\ninventory: {type: slurm}\nnodeExec: "ssh {node} {command}"\n',
  );
  expect(await runApp({ siteProfile: profile }, dir)).toEqual({
    code: 2,
    stderr: `error: Invalid site profile ${profile}: nodeExec: unknown key: 'nodeExec' belongs under 'tasks'\n`,
  });
}, 120_000);

it('refuses a -c siteRelayPrincipal that is neither an account id nor an IAM ARN with one error: line naming it, exit 2', async () => {
  expect(await runApp({ siteRelayPrincipal: 'head-node' }, dir)).toEqual({
    code: 2,
    stderr:
      "error: Invalid CDK context: siteRelayPrincipal: must be an account id (12 digits) or an IAM ARN (arn:aws:iam::<account>:role/<name>), got 'head-node'\n",
  });
}, 120_000);
