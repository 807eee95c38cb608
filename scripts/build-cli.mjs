#!/usr/bin/env node
// Compiles the `rollout` CLI to JavaScript (dist/rollout.js and its chunks, one ES module graph with
// every package left to node_modules), so that a command starts without transpiling TypeScript, and
// writes beside it the description of the command tree (dist/cli-spec.json) that `--help`,
// `--version`, `completion` and parse errors are answered from, and the list of the sources it was
// built from (dist/cli-build.json). `npm ci` builds it (the `prepare` script); bin/rollout.js and
// jest's globalSetup call ensureCliBuilt(), which builds again when any of those sources changed
// since, so a run never uses a stale build.
// The files sit in dist/, one level below the package root, as contracts/paths.ts is below it in the
// sources: the root it resolves from import.meta.url (statemachines/, lambdas/) is the same.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const manifestFile = path.join(dist, 'cli-build.json');

/** Whether dist/ holds a build of the sources as they are now. */
export function cliBuildIsFresh() {
  try {
    const { builtAt, inputs } = JSON.parse(readFileSync(manifestFile, 'utf8'));
    return inputs.every((input) => statSync(path.join(root, input)).mtimeMs <= builtAt);
  } catch {
    return false;
  }
}

/** Builds the CLI unless dist/ already holds a build of the current sources. */
export async function ensureCliBuilt() {
  if (!cliBuildIsFresh()) await buildCli();
}

/** Each file is written under a temporary name and renamed, so that a process starting meanwhile reads a whole file. */
function writeWhole(file, contents) {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, file);
}

export async function buildCli() {
  const { build } = await import('esbuild');
  // Taken before the sources are read: a source saved during the build makes the next run build again.
  const builtAt = Date.now();
  const result = await build({
    absWorkingDir: root,
    entryPoints: { rollout: 'cli/quick-start.ts', 'cli-program-spec': 'cli/program-spec.ts' },
    outdir: dist,
    chunkNames: 'cli-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  mkdirSync(dist, { recursive: true });
  // Chunks first (content-hashed names: a concurrent build writes the same bytes), the entries last.
  const entries = new Set(
    Object.keys(result.metafile.outputs)
      .filter((output) => result.metafile.outputs[output].entryPoint)
      .map((output) => path.join(root, output)),
  );
  const files = [...result.outputFiles].sort((a, b) => Number(entries.has(a.path)) - Number(entries.has(b.path)));
  for (const file of files) writeWhole(file.path, file.contents);

  const { programSpec } = await import(`${pathToFileURL(path.join(dist, 'cli-program-spec.js')).href}?built=${builtAt}`);
  writeWhole(path.join(dist, 'cli-spec.json'), `${JSON.stringify(programSpec())}\n`);
  writeWhole(manifestFile, `${JSON.stringify({ builtAt, inputs: Object.keys(result.metafile.inputs) })}\n`);
  // The chunks of earlier builds.
  const written = new Set(result.outputFiles.map((file) => path.basename(file.path)));
  for (const name of readdirSync(dist)) if (/^cli-[A-Z0-9]+\.js(\.map)?$/.test(name) && !written.has(name)) rmSync(path.join(dist, name), { force: true });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  await buildCli();
}
