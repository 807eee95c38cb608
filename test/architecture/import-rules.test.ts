import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The arrows of the architecture are enforced, not described: ESLint's per-folder rules
 * (eslint.config.js) refuse an import against the direction of the layers, and dependency-cruiser
 * (.dependency-cruiser.cjs) refuses a cycle. Each is shown refusing a wrong import here, and letting
 * the right ones through, so a rule that stopped matching would fail this test.
 */

const root = path.resolve(__dirname, '../..');
const run = promisify(execFile);

/**
 * ESLint's verdict on `import { thing } from '<specifier>'` written in `file`, for every case at once:
 * ESLint loads its flat config with a dynamic import, which Jest's module sandbox does not allow, so it runs in a node of its own.
 */
async function importProblems(cases: [file: string, specifier: string][]): Promise<string[][]> {
  const script = `
    import { ESLint } from 'eslint';
    const eslint = new ESLint({ cwd: process.cwd() });
    const cases = JSON.parse(process.argv[1]);
    const verdicts = [];
    for (const [file, specifier] of cases) {
      const [result] = await eslint.lintText("import { thing } from '" + specifier + "';\\nexport const used = thing;\\n", { filePath: file });
      verdicts.push(result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message));
    }
    process.stdout.write(JSON.stringify(verdicts));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(cases)], { cwd: root });
  return JSON.parse(stdout) as string[][];
}

const WRONG: [file: string, specifier: string, message: string][] = [
  ['api/routes.ts', '../local/serve', 'api/ imports only'],
  ['api/routes.ts', '../simulator', 'api/ imports only'],
  ['lambdas/activities/rolling-upgrade/step.ts', '../../../local/embedded-runtime', 'lambdas/activities/ imports only'],
  ['lambdas/activities/rolling-upgrade/step.ts', '../../entrypoints/environment', 'lambdas/activities/ imports only'],
  ['lambdas/activities/rolling-upgrade/step.ts', '../../../simulator/site-file', 'lambdas/activities/ imports only'],
  ['lambdas/entrypoints/handler.ts', '../../local/local-dynamodb', 'lambdas/entrypoints/ imports only'],
  ['lambdas/entrypoints/handler.ts', '../../simulator', 'lambdas/entrypoints/ imports only'],
  ['adapters/site/reader.ts', '../../simulator/site-file', 'adapters/ imports only'],
  ['control-plane/reads.ts', '../api', 'control-plane/ imports only'],
  ['control-plane/reads.ts', '../lambdas/entrypoints/api', 'control-plane/ imports only'],
  ['control-plane/reads.ts', '../cli/targets', 'control-plane/ imports only'],
  ['core/rolling-upgrade/rule.ts', '../../ports/site', 'core/ imports only'],
  ['core/rolling-upgrade/rule.ts', '../../adapters/site', 'core/ imports only'],
  ['core/rolling-upgrade/rule.ts', '@aws-sdk/client-sfn', 'core/ imports only'],
  ['simulator/models/model.ts', '../../control-plane/runtime', 'simulator/ imports only'],
  ['time/clock.ts', '../simulator', 'time/ imports only'],
];

const RIGHT: [file: string, specifier: string][] = [
  ['api/routes.ts', '../control-plane/runtime'],
  ['lambdas/activities/rolling-upgrade/step.ts', '../../../control-plane/request-checks/upgrade-request'],
  ['lambdas/entrypoints/handler.ts', '../activities/middleware'],
  ['lambdas/entrypoints/handler.ts', '../../api'],
  ['local/runtime.ts', '../lambdas/activities/rolling-upgrade/handlers'],
  ['local/runtime.ts', '../simulator'],
  ['cli/command.ts', '../local/open-runtime'],
  ['simulator/models/model.ts', '../../time/sim-clock'],
  ['core/rolling-upgrade/rule.ts', '../site/names'],
];

describe('the import rules of each folder', () => {
  let verdicts: string[][];
  beforeAll(async () => {
    verdicts = await importProblems([...WRONG.map(([file, specifier]): [string, string] => [file, specifier]), ...RIGHT]);
  });

  it.each(WRONG.map((c, i) => [...c, i] as const))('%s may not import %s', (_file, _specifier, message, i) => {
    expect(verdicts[i]).toHaveLength(1);
    expect(verdicts[i]![0]).toContain(message);
  });

  it.each(RIGHT.map((c, i) => [...c, WRONG.length + i] as const))('%s may import %s', (_file, _specifier, i) => {
    expect(verdicts[i]).toEqual([]);
  });
});

describe('no import cycles', () => {
  const depcruise = (args: string[]) =>
    promisify(execFile)(
      process.execPath,
      [path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'), '--config', '.dependency-cruiser.cjs', ...args],
      { cwd: root },
    ).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
    );

  it('refuses a cycle of two files, type-only imports included', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'cycle-'));
    try {
      await writeFile(path.join(dir, 'stages.ts'), "import { StageError } from './errors';\nexport const stage = (): never => { throw new StageError(); };\n");
      await writeFile(
        path.join(dir, 'errors.ts'),
        "import type { stage } from './stages';\nexport class StageError extends Error {}\nexport type Stage = typeof stage;\n",
      );
      const { code, stdout } = await depcruise([dir]);
      expect(code).not.toBe(0);
      expect(stdout).toMatch(/no-circular: .*errors\.ts/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
