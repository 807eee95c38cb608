import { writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A site profile of the local connectors on a RealSlurmCluster (real-slurm.ts): scontrol on this host,
 * Slurm's own reboot as the boot service, and Slurm's node list as the inventory.
 */
export const LOCAL_SLURM_PROFILE = 'transport: {type: local}\nworkloadManager: {type: scontrol}\nbootService: {type: slurm-reboot}\ninventory: {type: slurm}\n';

/** Writes LOCAL_SLURM_PROFILE into `dir` as profile.yaml: its path, for `--site-config`. */
export function writeLocalSlurmProfile(dir: string): string {
  const profile = path.join(dir, 'profile.yaml');
  writeFileSync(profile, LOCAL_SLURM_PROFILE);
  return profile;
}

/**
 * `rollout upgrade` of a RealSlurmCluster's `batch` partition to the harness's `img-2` template, polled every
 * second, as JSON: the arguments, with `extra` options after them.
 */
export function clusterUpgradeArgs(profile: string, extra: readonly string[] = []): string[] {
  return [
    'upgrade',
    '--site-config',
    profile,
    '--starting-label',
    'batch',
    '--upgrading-label',
    'upgrading',
    '--failed-label',
    'failed',
    '--template',
    'img-2',
    '--poll-interval',
    '1',
    '--json',
    ...extra,
  ];
}
