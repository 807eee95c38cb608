#!/usr/bin/env node
// Builds what `import ... from 'baremetal-rollout/infra'` loads in a CDK app of someone else's:
// dist/infra.js, the construct bundled as one ES module (every package left to node_modules, so
// aws-cdk-lib and constructs are the app's own), and dist/types/, its declarations, with relative
// imports given the `.js` that Node's resolution (NodeNext) wants. `npm run build`; `npm pack` runs it.
// The bundle sits in dist/, one level below the package root, as contracts/paths.ts is below it in
// the sources: the root it resolves from import.meta.url (statemachines/, lambdas/) is the same.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
// Only what this script writes: the compiled CLI lives in dist/ too (scripts/build-cli.mjs).
for (const written of ['infra.js', 'infra.js.map', 'types']) rmSync(path.join(dist, written), { recursive: true, force: true });

await build({
  entryPoints: [path.join(root, 'infra', 'index.ts')],
  outfile: path.join(dist, 'infra.js'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});

execFileSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
});

/** `from './x'` → `from './x.js'` (or `./x/index.js`), as the emitted declaration files are laid out. */
function withExtensions(file) {
  const dir = path.dirname(file);
  const text = readFileSync(file, 'utf8').replace(/(from\s+|import\()(['"])(\.{1,2}\/[^'"]*)\2/g, (whole, lead, quote, specifier) => {
    const target = path.resolve(dir, specifier);
    if (existsSync(`${target}.d.ts`)) return `${lead}${quote}${specifier}.js${quote}`;
    if (existsSync(path.join(target, 'index.d.ts'))) return `${lead}${quote}${specifier}/index.js${quote}`;
    return whole;
  });
  writeFileSync(file, text);
}

function walk(dir) {
  for (const entry of readdirSync(dir)) {
    const file = path.join(dir, entry);
    if (statSync(file).isDirectory()) walk(file);
    else if (file.endsWith('.d.ts')) withExtensions(file);
  }
}
walk(path.join(dist, 'types'));
