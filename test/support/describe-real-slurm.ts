import { type RealSlurmRelease, realSlurmReleases, realSlurmUnavailable } from '../../scripts/slurm/real-slurm';

/**
 * `describe` for a suite that needs a real Slurm, once per release (`realSlurmReleases()`, the release
 * in the title): `body(release)` starts its clusters with `RealSlurmCluster.start({ release, ... })`.
 * A release that cannot run here is skipped, saying why (in the suite's name and on the console),
 * never passing empty; with `REQUIRE_REAL_SLURM=1` (as `.ci/run` sets it) it fails instead, with the reason.
 */
export function describeRealSlurm(title: string, body: (release: RealSlurmRelease) => void): void {
  for (const release of realSlurmReleases()) {
    const titled = `${title} [Slurm ${release}]`;
    const reason = realSlurmUnavailable(release);
    if (reason === undefined) {
      describe(titled, () => body(release));
      continue;
    }
    if (process.env.REQUIRE_REAL_SLURM === '1') {
      describe(titled, () => {
        test(`a real Slurm ${release} is required here (REQUIRE_REAL_SLURM=1)`, () => {
          throw new Error(`cannot run a real Slurm ${release}: ${reason}`);
        });
      });
      continue;
    }
    console.warn(`${titled}: SKIPPED, ${reason}`);
    describe.skip(`${titled} (SKIPPED: ${reason})`, () => body(release));
  }
}
