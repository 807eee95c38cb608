import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';

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
  // core's subfolders are layers too (CORE_LAYERS in eslint.config.js): the cycles they had, each refused.
  ['core/site/site-definition.ts', '../environments', 'core/site/ is a leaf'],
  ['core/site/site-state.ts', '../task-graph/task-run-state', 'core/site/ is a leaf'],
  ['core/task-graph/selection.ts', '../group-deployment/graph-algorithms', 'core/task-graph/ imports only'],
  ['core/scheduling/operations.ts', '../group-deployment', 'core/scheduling/ imports only'],
  ['core/errors.ts', './group-deployment/stage-names', "core's own files"],
  ['core/graph/graph-algorithms.ts', '../site/names', 'core/graph/ is a leaf'],
  ['core/rolling-upgrade/upgrade-request.ts', '../environments', 'core/rolling-upgrade/ imports only'],
  ['core/rolling-upgrade/nested/rule.ts', '../../environments', 'core/rolling-upgrade/ imports only'],
  // The tools are not tests, and the product imports neither.
  ['bench/real-slurm-bench.ts', '../test/support/sites', 'bench/, scripts/ and bin/ are tools'],
  ['scripts/slurm/cluster.ts', '../../test/support/describe-real-slurm', 'bench/, scripts/ and bin/ are tools'],
  ['cli/command.ts', '../test/support/cli', 'cli/ imports only'],
  ['local/runtime.ts', '../scripts/slurm/real-slurm', 'local/ imports only'],
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
  ['core/task-graph/selection.ts', '../graph/graph-algorithms'],
  ['core/environments/schemas.ts', '../site/names'],
  // Through rolling-upgrade, which lies on scheduling: a layer imports what its layers import.
  ['core/environments/schemas.ts', '../scheduling'],
  ['core/site-file/site-definition.ts', '../environments'],
  ['core/group-deployment/stages.ts', '../deployment-stages'],
  ['core/group-deployment/stages.ts', '../errors'],
  ['core/errors.ts', './text'],
  ['bench/real-slurm-bench.ts', '../scripts/slurm/real-slurm'],
  ['scripts/slurm/cluster.ts', './real-slurm'],
  ['test/real-slurm/harness.test.ts', '../../scripts/slurm/real-slurm'],
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

/**
 * eslint.config.js's CORE_LAYERS, what each subfolder may import by them, and what its check says of
 * `cyclic` (CORE_LAYERS with one more arrow): read in a node of its own, as above.
 */
async function coreLayers(cyclic: Record<string, string[]>): Promise<{ layers: Record<string, string[]>; allowed: Record<string, string[]>; refusal: string }> {
  const script = `
    const { CORE_LAYERS, allowedCoreImports } = await import('./eslint.config.js');
    let refusal = '';
    try { allowedCoreImports({ ...CORE_LAYERS, ...JSON.parse(process.argv[1]) }); } catch (err) { refusal = err.message; }
    process.stdout.write(JSON.stringify({ layers: CORE_LAYERS, allowed: allowedCoreImports(CORE_LAYERS), refusal }));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(cyclic)], { cwd: root });
  return JSON.parse(stdout) as { layers: Record<string, string[]>; allowed: Record<string, string[]>; refusal: string };
}

/** Every import of core's files from one subfolder into another (type-only and re-exports included), as `from -> to` of subfolder names. */
function coreSubfolderImports(): { from: string; to: string; file: string; specifier: string }[] {
  const core = path.join(root, 'core');
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? files(path.join(dir, entry.name)) : entry.name.endsWith('.ts') ? [path.join(dir, entry.name)] : [],
    );
  const subfolder = (file: string) => path.relative(core, file).split(path.sep)[0]!;
  return files(core).flatMap((file) =>
    ts
      .preProcessFile(readFileSync(file, 'utf8'), true, true)
      .importedFiles.map(({ fileName }) => fileName)
      .filter((specifier) => specifier.startsWith('.'))
      .flatMap((specifier) => {
        const target = path.resolve(path.dirname(file), specifier);
        if (!target.startsWith(`${core}${path.sep}`)) return [];
        const [from, to] = [subfolder(file), subfolder(target)];
        return from !== to ? [{ from, to, file: path.relative(root, file), specifier }] : [];
      }),
  );
}

describe("core's subfolders", () => {
  let declared: Awaited<ReturnType<typeof coreLayers>>;
  beforeAll(async () => {
    declared = await coreLayers({ site: ['environments'] });
  });

  it('are each a layer or a leaf of CORE_LAYERS, and an arrow that makes a cycle fails the lint, naming the cycle', () => {
    const onDisk = readdirSync(path.join(root, 'core'), { withFileTypes: true }).filter((entry) => entry.isDirectory());
    expect(Object.keys(declared.layers).sort()).toEqual(onDisk.map((entry) => entry.name).sort());
    expect(declared.refusal).toBe('core/ layers form a cycle: site -> environments -> rolling-upgrade -> site');
  });

  it("import one another only down CORE_LAYERS, so that the subfolders' imports form no cycle", () => {
    const imports = coreSubfolderImports();
    // core's own files (errors.ts, ...) sit at core's root: their "subfolder" is their file name, and they import no subfolder.
    const isSubfolder = (name: string) => name in declared.layers;
    expect(imports.filter(({ from, to }) => isSubfolder(from) && isSubfolder(to) && !declared.allowed[from]!.includes(to))).toEqual([]);
    expect(imports.filter(({ from, to }) => !isSubfolder(from) && isSubfolder(to))).toEqual([]);
    // And, whatever CORE_LAYERS says, no cycle among the subfolders as imported: a depth-first search for a way back.
    const edges = new Map<string, Set<string>>();
    for (const { from, to } of imports) if (isSubfolder(from) && isSubfolder(to)) edges.set(from, (edges.get(from) ?? new Set()).add(to));
    const reachesItself = (start: string) => {
      const seen = new Set<string>();
      const stack = [...(edges.get(start) ?? [])];
      while (stack.length > 0) {
        const next = stack.pop()!;
        if (next === start) return true;
        if (!seen.has(next)) stack.push(...(seen.add(next), edges.get(next) ?? []));
      }
      return false;
    };
    expect([...edges.keys()].filter(reachesItself)).toEqual([]);
    // The scan sees the arrows there are (a scan that found none would pass the above for nothing).
    expect(imports).toEqual(expect.arrayContaining([expect.objectContaining({ from: 'task-graph', to: 'graph' })]));
  });
});
