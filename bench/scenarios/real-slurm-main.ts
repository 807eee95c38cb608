import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REAL_SLURM_RELEASES, RealSlurmCluster, type RealSlurmRelease, realSlurmUnavailable } from '../../scripts/slurm/real-slurm';
import { describeRealScenario, generateRealScenario, judgeRealRun, restoreCluster, runRealScenario } from './real-slurm-scenarios';

/** The cluster the real-Slurm scenarios run on: 4 nodes of `release`, quick reboots, no slurmrestd. */
export function startScenarioCluster(release: RealSlurmRelease): Promise<RealSlurmCluster> {
  return RealSlurmCluster.start({ release, nodes: 4, rebootDelaySeconds: 1, restd: false });
}

/** `--slurm RELEASE` checked: one of the releases the harness runs. */
export function scenarioRelease(value: string): RealSlurmRelease {
  const release = REAL_SLURM_RELEASES.find((r) => r === value);
  if (release === undefined) throw new Error(`--slurm: '${value}' is not a release the harness runs (${REAL_SLURM_RELEASES.join(', ')})`);
  return release;
}

/** `npm run scenarios -- --slurm 22.05 --count N [--seed S]`: N scenarios on a real cluster of that release. Returns the exit status. */
export async function runRealSlurmScenarios(release: RealSlurmRelease, count: number, seed: number | undefined): Promise<number> {
  const unavailable = realSlurmUnavailable(release);
  if (unavailable) {
    console.error(`cannot run a real Slurm here: ${unavailable}`);
    return 2;
  }
  const first = seed ?? Math.floor(Math.random() * 1_000_000);
  console.log(`real Slurm ${release}: ${count} scenario(s) from seed ${first}`);
  const cluster = await startScenarioCluster(release);
  const dir = mkdtempSync(path.join(tmpdir(), 'rollout-scenarios-'));
  const started = Date.now();
  let failed = 0;
  try {
    for (let s = first; s < first + count; s++) {
      const scenario = generateRealScenario(s, cluster.nodes);
      const run = await runRealScenario(cluster, scenario, dir);
      const { violations, known } = judgeRealRun(run);
      const line = `${describeRealScenario(scenario)}: exit ${run.exitCode}, ${run.report?.state ?? 'no session'}`;
      if (violations.length > 0) {
        failed++;
        console.log(`✗ ${line}\n${violations.map((v) => `  ✗ ${v.invariant}${v.node ? ` ${v.node}` : ''}: ${v.text}`).join('\n')}`);
        console.log(`  replay: npm run scenarios -- --slurm ${release} --seed ${s} --count 1`);
      } else console.log(`ok ${line}`);
      for (const v of known) console.log(`  known (item ${v.item}) ${v.invariant}${v.node ? ` ${v.node}` : ''}: ${v.text}`);
      await restoreCluster(cluster, scenario);
    }
  } finally {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const minutes = (Date.now() - started) / 60_000;
  console.log(`\n${count} scenario(s) on Slurm ${cluster.version}, ${failed} broke an invariant; ${(count / minutes).toFixed(1)} scenarios/min`);
  return failed > 0 ? 1 : 0;
}
