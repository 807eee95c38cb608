import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseSiteProfile, type SiteProfile } from '../../core/site/site-profile';
import { RELAY_SCRIPT } from '../../local/site-relay-script';
import { parseTriggerRow } from '../../adapters/site/commands/strigger-triggers';
import { parseRelayProgram } from '../../core/site/site-event';
import type { RealSlurmCluster } from './real-slurm';

/**
 * A RealSlurmCluster (real-slurm.ts) driven by its site events (issue 29): the site profile of the local
 * connectors (scontrol, slurm-reboot, the slurm inventory) with `siteEvents`, the sh relay (`rollout relay
 * script`) in the cluster's dir as the triggers' program, its spool beside it, read by the runtime itself.
 * A cluster in a chroot sees its dir at the same path (real-slurm.ts clusterDir): slurmctld runs the relay
 * there, the runtime reads the spool here.
 */

/** Where the relay is written in a cluster's dir (`rollout relay script --output <this>`). */
export function clusterRelayPath(cluster: Pick<RealSlurmCluster, 'dir'>): string {
  return path.join(cluster.dir, 'rollout-relay');
}

/** The relay's spool in a cluster's dir: made here, as a site's admin makes it when installing the relay. */
export function clusterSpool(cluster: Pick<RealSlurmCluster, 'dir'>): string {
  const spool = path.join(cluster.dir, 'site-events');
  mkdirSync(spool, { recursive: true });
  return spool;
}

/** Writes the relay script (RELAY_SCRIPT, what `rollout relay script` writes) to clusterRelayPath: its path. */
export function writeClusterRelay(cluster: Pick<RealSlurmCluster, 'dir'>): string {
  const relay = clusterRelayPath(cluster);
  writeFileSync(relay, RELAY_SCRIPT, { mode: 0o755 });
  return relay;
}

/** The firings waiting in the spool (whole ones: the relay writes a temporary name first). */
export function spooledFiringFiles(spool: string): string[] {
  return readdirSync(spool).filter((name) => name.endsWith('.json') && !name.startsWith('.'));
}

/** slurmctld's `Node c01 rebooted 1 secs ago` lines: each node's registration after a reboot, epoch ms (the log's local time). */
export function registrationsAfterReboot(cluster: RealSlurmCluster, since: number): Map<string, number> {
  const seen = new Map<string, number>();
  for (const line of cluster.logLines('slurmctld.log', /\] Node \S+ rebooted /)) {
    const match = /^\[([^\]]+)\] Node (\S+) rebooted /.exec(line);
    if (!match) continue;
    const at = new Date(match[1]!).getTime();
    if (at >= since && !seen.has(match[2]!)) seen.set(match[2]!, at);
  }
  return seen;
}

/** A session's triggers in `strigger --get` (their program names it). */
export async function triggersOfSession(cluster: RealSlurmCluster, upgradeId: string): Promise<number> {
  const { stdout } = await cluster.run('strigger', ['--get', '--noheader']);
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => parseTriggerRow(line))
    .filter((row) => row && parseRelayProgram(row.program)?.session === upgradeId).length;
}

/**
 * The cluster's Slurm commands with its SLURM_CONF built in (`<dir>/site-bin/<command>`), for a profile's
 * commandPaths: a profile's local transport runs them with this process's environment, so two clusters can
 * be driven from one process (and no SLURM_CONF need be exported).
 */
function writeSiteCommands(cluster: Pick<RealSlurmCluster, 'dir' | 'conf'>): NonNullable<SiteProfile['commandPaths']> {
  const bin = path.join(cluster.dir, 'site-bin');
  mkdirSync(bin, { recursive: true });
  const paths = {} as Record<'scontrol' | 'sinfo' | 'squeue' | 'strigger', string>;
  for (const command of ['scontrol', 'sinfo', 'squeue', 'strigger'] as const) {
    paths[command] = path.join(bin, command);
    writeFileSync(paths[command], `#!/bin/sh\nSLURM_CONF='${cluster.conf}' exec '${path.join(cluster.dir, 'bin', command)}' "$@"\n`, { mode: 0o755 });
  }
  return paths;
}

/**
 * The site profile of the local connectors on `cluster`; with `siteEvents`, the scontrol connector's siteEvents:
 * the relay (`<relay> --spool <spool>`), the spool read on this host, the backstop poll.
 */
export function clusterSiteProfile(
  cluster: Pick<RealSlurmCluster, 'dir' | 'conf'>,
  siteEvents?: { relay: string; spool: string; backstopSeconds?: number },
): SiteProfile {
  return parseSiteProfile({
    transport: { type: 'local' },
    commandPaths: writeSiteCommands(cluster),
    workloadManager: {
      type: 'scontrol',
      ...(siteEvents
        ? {
            siteEvents: {
              relay: `${siteEvents.relay} --spool ${siteEvents.spool}`,
              spool: siteEvents.spool,
              ...(siteEvents.backstopSeconds !== undefined ? { backstopSeconds: siteEvents.backstopSeconds } : {}),
            },
          }
        : {}),
    },
    bootService: { type: 'slurm-reboot' },
    inventory: { type: 'slurm' },
  });
}
