// A real Slurm cluster by hand: `npm run -s slurm:start [-- --nodes 4 ...]` starts one (as the tests do,
// through scripts/slurm/real-slurm.ts) and leaves it running; `npm run slurm:stop` stops it. On stdout
// only the `export ...` line (so `eval "$(npm run -s slurm:start)"` works); everything else on stderr.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { clusterUpgradeArgs, writeLocalSlurmProfile } from './upgrade-on-cluster';
import { handStartedClusterFile, REAL_SLURM_RELEASES, RealSlurmCluster, type RealSlurmRelease, stopClusterDir } from './real-slurm';

const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
// The record of the cluster started by hand; SLURM_START_RECORD puts it elsewhere (a test's own, beside a person's cluster).
const recordFile = process.env.SLURM_START_RECORD ?? handStartedClusterFile(repoDir);

interface Recorded {
  dir: string;
  conf: string;
  nodes: string[];
  restd?: { url: string; versions: string[] };
  /** The site profile written for it (`rollout ... --site-config`). */
  profile?: string;
}

function whole(name: string, min: number, max: number) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}`);
    return n;
  };
}

function release(value: string): RealSlurmRelease {
  if (!(REAL_SLURM_RELEASES as readonly string[]).includes(value)) throw new InvalidArgumentError(`--release must be one of ${REAL_SLURM_RELEASES.join(', ')}`);
  return value as RealSlurmRelease;
}

const program = new Command('slurm').description('a real Slurm cluster on this machine, for development');

program
  .command('start')
  .description('start a cluster and leave it running; prints the SLURM_CONF to export')
  .option(
    '--release <release>',
    `Slurm release: ${REAL_SLURM_RELEASES.join(', ')} (default: the host's; another runs in its chroot, scripts/slurm/chroot.sh build RELEASE)`,
    release,
  )
  .option('--nodes <n>', 'nodes', whole('--nodes', 1, 99), 8)
  .option('--node-prefix <prefix>', 'node names: <prefix>01, <prefix>02, ...', 'c')
  .option('--slurmd-timeout <s>', 'slurm.conf SlurmdTimeout', whole('--slurmd-timeout', 1, 65533), 30)
  .option('--resume-timeout <s>', 'slurm.conf ResumeTimeout', whole('--resume-timeout', 1, 65533), 60)
  .option('--return-to-service <0|1|2>', 'slurm.conf ReturnToService', whole('--return-to-service', 0, 2), 2)
  .option('--reboot-delay <s>', 'seconds the RebootProgram stand-in keeps a node down', whole('--reboot-delay', 0, 3600), 5)
  .option('--no-restd', 'do not start slurmrestd')
  .option(
    '--port-base <n>',
    'ports from n on: slurmctld on n, slurmrestd on n+1, the slurmds on n+2... (default: free ports drawn at random)',
    whole('--port-base', 1024, 65535),
  )
  .action(
    async (options: {
      release?: RealSlurmRelease;
      nodes: number;
      nodePrefix: string;
      slurmdTimeout: number;
      resumeTimeout: number;
      returnToService: 0 | 1 | 2;
      rebootDelay: number;
      restd: boolean;
      portBase?: number;
    }) => {
      if (existsSync(recordFile)) {
        const recorded = JSON.parse(readFileSync(recordFile, 'utf8')) as Recorded;
        if (existsSync(recorded.conf)) throw new Error(`a cluster started by hand is running already (SLURM_CONF=${recorded.conf}); npm run slurm:stop first`);
      }
      const cluster = await RealSlurmCluster.start({
        ...(options.release ? { release: options.release } : {}),
        nodes: options.nodes,
        nodePrefix: options.nodePrefix,
        slurmdTimeout: options.slurmdTimeout,
        resumeTimeout: options.resumeTimeout,
        returnToService: options.returnToService,
        rebootDelaySeconds: options.rebootDelay,
        restd: options.restd,
        ...(options.portBase !== undefined ? { portBase: options.portBase } : {}),
        repoDir,
      });
      cluster.keepAfterExit();
      // A site profile of the local connectors (scontrol on PATH, Slurm's reboot, Slurm's node list), ready for --site-config.
      const profile = writeLocalSlurmProfile(cluster.dir);
      const recorded: Recorded = {
        dir: cluster.dir,
        conf: cluster.conf,
        nodes: [...cluster.nodes],
        ...(cluster.restd ? { restd: cluster.restd } : {}),
        profile,
      };
      mkdirSync(path.dirname(recordFile), { recursive: true });
      writeFileSync(recordFile, `${JSON.stringify(recorded, null, 2)}\n`);
      const lines = [
        `Slurm ${cluster.version}${cluster.root ? ` (in the chroot ${cluster.root})` : ''}: ${cluster.nodes.length} nodes (${cluster.nodes[0]}..${cluster.nodes.at(-1)}), one slurmd each, in ${cluster.dir}`,
        `its commands (scontrol, sinfo, squeue, sbatch, ...): ${path.join(cluster.dir, 'bin')}`,
        ...(cluster.restd ? [`slurmrestd ${cluster.restd.url} (openapi ${cluster.restd.versions.join(', ')}); a token: scontrol token username=root`] : []),
        `reboots the RebootProgram stand-in ran: ${path.join(cluster.dir, 'reboots.log')}; logs: ${path.join(cluster.dir, 'log')}`,
        `a site profile for it: ${profile}; after the export, e.g.: rollout ${clusterUpgradeArgs(profile, ['--step-size', '2'])
          .filter((arg) => arg !== '--json')
          .join(' ')}`,
        'stop it with: npm run slurm:stop',
        '',
      ];
      process.stderr.write(lines.join('\n'));
      process.stdout.write(`export SLURM_CONF=${cluster.conf} PATH=${path.join(cluster.dir, 'bin')}:$PATH\n`);
    },
  );

program
  .command('stop')
  .description('stop the cluster slurm:start started (every process it started, by pid) and remove its dir')
  .option('--keep-dir', 'keep its dir (logs)')
  .action(async (options: { keepDir?: boolean }) => {
    if (!existsSync(recordFile)) {
      process.stderr.write('no cluster started by hand (npm run slurm:start) is recorded\n');
      return;
    }
    const recorded = JSON.parse(readFileSync(recordFile, 'utf8')) as Recorded;
    if (existsSync(recorded.conf)) await stopClusterDir(recorded.dir, { keepDir: options.keepDir ?? false });
    rmSync(recordFile, { force: true });
    process.stderr.write(`stopped the cluster in ${recorded.dir}\n`);
  });

try {
  await program.parseAsync(process.argv);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
