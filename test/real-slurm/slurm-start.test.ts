import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { LOCAL_SLURM_PROFILE } from '../../scripts/slurm/upgrade-on-cluster';
import { describeRealSlurm } from '../support/describe-real-slurm';

const ROOT = path.resolve(__dirname, '..', '..');
const run = promisify(execFile);

/**
 * `npm run -s slurm:start` as docs/guides/upgrade-a-slurm-cluster.md gives it: only the `export ...` line on stdout (so that
 * `eval "$(npm run -s slurm:start)"` works), the ports given, and a site profile for the cluster.
 */
describeRealSlurm('npm run -s slurm:start', (release) => {
  it('prints only the export line on stdout, takes the ports given, writes a site profile; slurm:stop stops it', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-slurm-start-'));
    // Its own record: a cluster a person started by hand in this checkout is left alone.
    const env = { ...process.env, SLURM_START_RECORD: path.join(dir, 'cluster.json') };
    const base = 20_000 + 10 * Math.floor(Math.random() * 1000);
    try {
      const started = await run('npm', ['run', '-s', 'slurm:start', '--', '--release', release, '--nodes', '2', '--no-restd', '--port-base', String(base)], {
        cwd: ROOT,
        env,
      });
      expect(started.stdout).toMatch(/^export SLURM_CONF=\S+ PATH=\S+:\$PATH\n$/);
      const recorded = JSON.parse(readFileSync(env.SLURM_START_RECORD, 'utf8')) as { conf: string; profile: string };
      const conf = readFileSync(recorded.conf, 'utf8');
      expect(conf).toContain(`SlurmctldPort=${base}\n`);
      expect(conf).toMatch(new RegExp(`NodeName=c01 .*Port=${base + 2} `));
      expect(started.stderr).toContain(`a site profile for it: ${recorded.profile}`);
      expect(readFileSync(recorded.profile, 'utf8')).toBe(LOCAL_SLURM_PROFILE);
      // The export, evaluated as printed, reaches the cluster.
      const sinfo = await run('bash', ['-c', `eval "$1"; sinfo -h -N -o %N`, 'bash', started.stdout], { env });
      expect(sinfo.stdout.trim().split('\n').sort()).toEqual(['c01', 'c02']);

      await run('npm', ['run', '-s', 'slurm:stop'], { cwd: ROOT, env });
      expect(existsSync(recorded.conf)).toBe(false);
    } finally {
      await run('npm', ['run', '-s', 'slurm:stop'], { cwd: ROOT, env }).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
