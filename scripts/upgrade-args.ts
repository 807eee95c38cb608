import path from 'node:path';

/**
 * `rollout upgrade`'s arguments as the tests and the benchmarks give them: one place for the labels,
 * step and template of the example sites and of the small sites the tests write. Here, not under test/,
 * because bench/ imports nothing of test/ (eslint.config.js).
 */

/** The checkout: from this file under Jest (CommonJS), from the working directory under tsx (ESM, no __dirname), as real-slurm.ts does. */
const REPO_DIR = typeof __dirname === 'string' ? path.resolve(__dirname, '..') : process.cwd();

/** The 64-node example site (examples/sites/rolling-upgrade-64.yaml), by absolute path. */
export const EXAMPLE_SITE_64 = path.join(REPO_DIR, 'examples', 'sites', 'rolling-upgrade-64.yaml');

/** A flag's value: a string or number follows the flag; `true` is the flag alone; `false` or `undefined` leaves it out. */
export type UpgradeFlags = Record<string, string | number | boolean | undefined>;

/** The example sites' groups (examples/sites/*.yaml), in steps of 8 to cos-2.4: what `upgradeArgs` gives unless told otherwise. */
export const EXAMPLE_UPGRADE = {
  startingLabel: 'compute-nodes',
  upgradingLabel: 'upgrading-nodes',
  failedLabel: 'failed-nodes',
  stepSize: 8,
  template: 'cos-2.4',
} as const satisfies UpgradeFlags;

/** EXAMPLE_UPGRADE as the workflow's request: `npm start`'s (package.json "start"), lock-step in steps of 8 to cos-2.4. */
export const EXAMPLE_REQUEST = {
  startingLabel: EXAMPLE_UPGRADE.startingLabel,
  upgradingLabel: EXAMPLE_UPGRADE.upgradingLabel,
  failedLabel: EXAMPLE_UPGRADE.failedLabel,
  upgradeStepSize: EXAMPLE_UPGRADE.stepSize,
  upgradeTemplateId: EXAMPLE_UPGRADE.template,
  workloadManagerType: 'slurm',
} as const;

/** The small sites the tests write (`groups: {compute: [...], upgrading: [], failed: []}`, `bootTemplates: [cos-2.4]`), in steps of 2. */
export const TEST_SITE_UPGRADE = {
  startingLabel: 'compute',
  upgradingLabel: 'upgrading',
  failedLabel: 'failed',
  stepSize: 2,
  template: 'cos-2.4',
} as const satisfies UpgradeFlags;

/**
 * `['upgrade', ...]` with EXAMPLE_UPGRADE's flags and `flags` over them, each named in camelCase
 * (`stepSize: 2` is `--step-size 2`, `site: FILE` is `--site FILE`, `json: true` is `--json`).
 */
export function upgradeArgs(flags: UpgradeFlags = {}): string[] {
  return ['upgrade', ...toOptions({ ...EXAMPLE_UPGRADE, ...flags })];
}

/** `{stepSize: 2, json: true}` as `['--step-size', '2', '--json']`. */
function toOptions(flags: UpgradeFlags): string[] {
  return Object.entries(flags).flatMap(([name, value]) => {
    if (value === undefined || value === false) return [];
    const flag = `--${name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
    return value === true ? [flag] : [flag, String(value)];
  });
}
