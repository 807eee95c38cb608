import { stringify } from 'yaml';
import { TEST_SITE_UPGRADE, type UpgradeFlags } from '../../scripts/upgrade-args';

/** nid000000 to nid000005: the nodes of busyNodeSiteYaml. */
export const BUSY_SITE_NODES = Array.from({ length: 6 }, (_, i) => `nid00000${i}`);

/**
 * A site file of six nodes in the group `compute` (with empty `upgrading` and `failed`), template cos-2.4, on
 * which node 2 runs a job for `busySeconds`: a lock-step upgrade in steps of 2 (BUSY_SITE_UPGRADE) waits in its
 * second step, after its first boot, for as long as the job runs.
 */
export const busyNodeSiteYaml = (busySeconds: number) =>
  stringify({
    nodes: BUSY_SITE_NODES.map((name, i) => ({ name, nid: i + 1, ...(i === 2 ? { wlm: { state: 'ALLOCATED', busySeconds } } : {}) })),
    groups: { compute: BUSY_SITE_NODES, upgrading: [], failed: [] },
    bootTemplates: ['cos-2.4'],
    timing: { bootSeconds: 60, returnSeconds: 10 },
  });

/** `rollout upgrade`'s flags on it (for upgradeArgs): steps of 2, polled every 30 simulated seconds. */
export const BUSY_SITE_UPGRADE = { ...TEST_SITE_UPGRADE, pollInterval: 30 } satisfies UpgradeFlags;
