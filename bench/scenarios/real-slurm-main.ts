export async function runRealSlurmScenarios(release: string, count: number, seed: number | undefined): Promise<number> {
  console.error(`real Slurm ${release} scenarios (${count}, seed ${seed ?? 'drawn'}): not built yet`);
  return 2;
}
