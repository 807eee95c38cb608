import { z } from 'zod';
import type { WlmBaseState, WlmNode } from '../../ports/site';
import { expandHostlist } from '../../core/site/hostlist';

const BASE_STATES: ReadonlySet<string> = new Set<WlmBaseState>(['IDLE', 'ALLOCATED', 'MIXED', 'COMPLETING', 'DOWN', 'FUTURE', 'UNKNOWN']);

/** Slurm 21.08/22.05 print times as numbers; 23.02+ as `{set, infinite, number}` (slurmrestd's shape). */
const slurmTime = z.union([z.number(), z.object({ set: z.boolean(), infinite: z.boolean().optional(), number: z.number().optional() })]).optional();

/** One node of `scontrol --json show node` and of slurmrestd's /nodes (the same data_parser shape): the fields we read. */
export const slurmJsonNode = z.object({
  name: z.string(),
  state: z.union([z.array(z.string()), z.string().transform((s) => s.split('+'))]),
  /** v0.0.38 (Slurm 22.05's `sinfo --json`, slurmrestd): the flags apart from a lowercase base `state`. */
  state_flags: z.array(z.string()).optional(),
  reason: z.string().optional(),
  boot_time: slurmTime,
  slurmd_start_time: slurmTime,
  features: z.union([z.array(z.string()), z.string().transform((s) => (s ? s.split(',') : []))]).optional(),
  active_features: z.union([z.array(z.string()), z.string().transform((s) => (s ? s.split(',') : []))]).optional(),
  partitions: z.array(z.string()).optional(),
  comment: z.string().optional(),
});
export type SlurmJsonNode = z.output<typeof slurmJsonNode>;

export const slurmJsonNodes = z.object({
  nodes: z.array(slurmJsonNode),
  errors: z.array(z.object({ error: z.string().optional(), description: z.string().optional(), error_number: z.number().optional() })).optional(),
});

function seconds(time: z.output<typeof slurmTime>): number | undefined {
  if (time === undefined) return undefined;
  const value = typeof time === 'number' ? time : time.set ? time.number : undefined;
  return value ? value : undefined;
}

/**
 * Slurm's state words (`IDLE+DRAIN+COMPLETING`, sinfo's `idle+drain`, v0.0.38's `state` plus
 * `state_flags`) as a base state and flags. COMPLETING is a flag beside a base state from Slurm
 * 23.02's data_parser on; it stands as the base only when no other base word is there.
 */
export function slurmStateWords(words: readonly string[]): { base: WlmBaseState; flags: string[] } {
  const state = words.map((s) => s.trim().toUpperCase()).filter((s) => s !== '');
  const base = state.find((s) => BASE_STATES.has(s) && s !== 'COMPLETING') ?? state.find((s) => s === 'COMPLETING') ?? 'UNKNOWN';
  return { base: base as WlmBaseState, flags: state.filter((s) => s !== base) };
}

export function toWlmNode(node: SlurmJsonNode): WlmNode {
  const { base, flags } = slurmStateWords([...node.state, ...(node.state_flags ?? [])]);
  const boot = seconds(node.boot_time);
  return {
    name: node.name,
    base,
    flags,
    reason: node.reason || undefined,
    bootTime: boot === undefined ? undefined : boot * 1000,
  };
}

/** slurmrestd's `GET /jobs` (and `scontrol --json show job`): the fields a running job's end is read from. */
export const slurmJsonJobs = z.object({
  jobs: z.array(
    z.object({
      job_state: z.union([z.array(z.string()), z.string().transform((s) => s.split('+'))]),
      nodes: z.string().optional(),
      end_time: slurmTime,
    }),
  ),
  errors: slurmJsonNodes.shape.errors,
});

/** When the running jobs of each wanted node end at the latest (epoch ms; Infinity: no limit). */
export function runningJobEnds(jobs: z.output<typeof slurmJsonJobs>['jobs'], wanted: ReadonlySet<string>): Map<string, number> {
  const ends = new Map<string, number>();
  for (const job of jobs) {
    if (!job.job_state.some((s) => s.toUpperCase() === 'RUNNING') || !job.nodes) continue;
    const end = job.end_time;
    const at = typeof end === 'object' && end.infinite ? Infinity : seconds(end);
    if (at === undefined) continue;
    for (const node of expandHostlist(job.nodes)) {
      if (wanted.has(node)) ends.set(node, Math.max(ends.get(node) ?? 0, at === Infinity ? Infinity : at * 1000));
    }
  }
  return ends;
}
