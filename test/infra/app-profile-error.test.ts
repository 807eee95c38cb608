import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/** `cdk synth -c siteProfile=FILE` runs the CDK app: a profile that is not one is said as the CLI says it, one `error:` line, no stack. */
it('refuses a bad site profile with one error: line, exit 2, saying where a misplaced key belongs', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-app-'));
  try {
    const profile = path.join(dir, 'site.yaml');
    await writeFile(
      profile,
      'transport: {type: local}\nworkloadManager: {type: scontrol}\nbootService: {type: slurm-reboot}\ninventory: {type: slurm}\nnodeExec: "ssh {node} {command}"\n',
    );
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [path.join(ROOT, 'bin', 'run-ts.js'), 'infra/app.ts'],
        {
          cwd: ROOT,
          env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify({ siteProfile: profile }), CDK_OUTDIR: dir },
        },
        (_err, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
      );
    });
    expect(result).toEqual({
      code: 2,
      stderr: `error: Invalid site profile ${profile}: nodeExec: unknown key: 'nodeExec' belongs under 'tasks'\n`,
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 120_000);
