import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describeRealSlurm, type RealSlurmCluster } from '../support/real-slurm';
import { startScenarioCluster } from '../../bench/scenarios/real-slurm-main';
import { describeRealScenario, generateRealScenario, judgeRealRun, restoreCluster, runRealScenario } from '../../bench/scenarios/real-slurm-scenarios';

/**
 * Seeded scenarios on a real Slurm (issue 26, "Scenarios and invariants"): 6 per run, drawn from a
 * seed printed at the start (SCENARIO_SEED to replay one), each a `rollout upgrade` process over the
 * local connectors, judged against the RebootProgram's log, `scontrol show node` and the job history
 * (bench/scenarios/real-slurm-scenarios.ts). The release is a parameter: the harness starts 22.05,
 * the host's, today.
 */
const RELEASE = process.env.SCENARIO_SLURM_RELEASE ?? '22.05';
const SEED = Number(process.env.SCENARIO_SEED ?? Math.floor(Math.random() * 1_000_000));
const COUNT = 6;

describeRealSlurm(`scenarios on a real Slurm ${RELEASE}`, () => {
  let cluster: RealSlurmCluster;
  let dir: string;
  beforeAll(async () => {
    console.log(`real-Slurm scenarios: seed ${SEED} (replay: SCENARIO_SEED=${SEED} npx jest test/real-slurm/scenarios.test.ts)`);
    cluster = await startScenarioCluster(RELEASE);
    dir = mkdtempSync(path.join(tmpdir(), 'rollout-scenarios-'));
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  for (let seed = SEED; seed < SEED + COUNT; seed++) {
    test(`seed ${seed} keeps every invariant`, async () => {
      const scenario = generateRealScenario(seed, cluster.nodes);
      const run = await runRealScenario(cluster, scenario, dir);
      const { violations, known } = judgeRealRun(run);
      for (const v of known) console.log(`seed ${seed}: known bug (issue 26 item ${v.item}): ${v.invariant} ${v.node ?? ''}: ${v.text}`);
      await restoreCluster(cluster, scenario);
      expect({ scenario: describeRealScenario(scenario), violations }).toEqual({ scenario: describeRealScenario(scenario), violations: [] });
    }, 240_000);
  }
});
