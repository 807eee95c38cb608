import { parseSiteDefinition, type SiteDefinition } from '../simulator';
import { lognormal, randomStream, type LognormalSpec } from '../simulator/seeded-random';
import type { BoundNode } from './lower-bound';

export interface BusyFleetSpec {
  nodes: number;
  /** Share of nodes running a job at the start, and of time busy afterwards (the workload). */
  utilisation: number;
  /** Share of nodes running a job at the start, when it differs from `utilisation` (0: every node idle, jobs arrive later). */
  busyAtStart?: number;
  /**
   * Jobs end at a uniform fraction of their time limit (drawn from `jobSeconds`), and the workload
   * manager reports the limit's end, as Slurm does. { min: 1, max: 1 }: every job runs to its limit
   * (the simulator then reports each job's true end, the model of the figures before issue 21).
   */
  jobEndFraction: { min: number; max: number };
  /** Remaining time of the running jobs at the start, and length of later jobs. */
  jobSeconds: LognormalSpec;
  bootSeconds: number;
  returnSeconds: number;
  /** Share of nodes whose boot fails. */
  bootFailures: number;
  nodesPerRack: number;
  seed: number;
}

/**
 * The busy fleet: 60% busy, time limits lognormal with a median of 2 h and a tail to 24 h,
 * each job ending at 20-100% of its limit (seeded), boot 600 s, return 120 s.
 */
export const BUSY_FLEET: Omit<BusyFleetSpec, 'nodes'> = {
  utilisation: 0.6,
  jobSeconds: { median: 7200, sigma: 1, max: 86400 },
  bootSeconds: 600,
  returnSeconds: 120,
  bootFailures: 0.01,
  nodesPerRack: 64,
  seed: 7,
  jobEndFraction: { min: 0.2, max: 1 },
};

/** A reproducible busy site: the same spec gives the same site. Groups: compute (the plan), upgrading, failed. */
export function busyFleetSite(spec: BusyFleetSpec): SiteDefinition {
  const random = randomStream(spec.seed, 'busy-fleet');
  const nodes = Array.from({ length: spec.nodes }, (_, i) => {
    const rack = `x${3000 + Math.floor(i / spec.nodesPerRack)}`;
    const busy = random() < (spec.busyAtStart ?? spec.utilisation);
    const limitSeconds = busy ? Math.max(1, Math.round(lognormal(random, spec.jobSeconds))) : 0;
    const fails = random() < spec.bootFailures;
    // Drawn after the others, and only when jobs end early, so the sites of the figures before issue 21 replay exactly.
    const { min, max } = spec.jobEndFraction;
    const early = busy && !(min === 1 && max === 1);
    const busySeconds = early ? Math.max(1, Math.round(limitSeconds * (min + (max - min) * random()))) : limitSeconds;
    return {
      name: `${rack}c0s${Math.floor((i % spec.nodesPerRack) / 2)}b0n${i % 2}`,
      nid: i + 1,
      rack,
      ...(busy ? { wlm: { state: 'ALLOCATED' as const, busySeconds, ...(early ? { timeLimitSeconds: limitSeconds } : {}) } } : {}),
      ...(fails ? { faults: { boot: 'fail' as const } } : {}),
    };
  });
  return parseSiteDefinition({
    nodes,
    groups: { compute: nodes.map((n) => n.name), upgrading: [], failed: [] },
    bootTemplates: ['cos-2.4'],
    timing: { bootSeconds: spec.bootSeconds, returnSeconds: spec.returnSeconds },
    workload: { utilisation: spec.utilisation, jobSeconds: spec.jobSeconds, seed: spec.seed, endFraction: spec.jobEndFraction },
  });
}

/** The lower bound's view of a site: each node released when its first job ends, holding boot + return (boot only if it fails). */
export function boundNodes(site: SiteDefinition): BoundNode[] {
  return site.nodes.map((node) => ({
    releaseSeconds: node.wlm.busySeconds,
    holdSeconds: site.timing.bootSeconds + (node.faults.boot === 'fail' ? 0 : site.timing.returnSeconds),
  }));
}
