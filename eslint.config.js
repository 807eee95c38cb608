import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The top-level folders (and lambdas' two halves) whose imports are ruled. */
const FOLDERS = [
  'core',
  'ports',
  'time',
  'adapters',
  'simulator',
  'control-plane',
  'lambdas/activities',
  'lambdas/entrypoints',
  'api',
  'local',
  'infra',
  'cli',
  'contracts',
  'bench',
  'scripts',
  'test',
];

/**
 * core's subfolders, each a layer over the subfolders it names (and, through them, those they name),
 * or a leaf that names none. core's own files (errors.ts, validation.ts, text.ts, ...) lie below every
 * subfolder: they import none. A subfolder missing here, or a cycle in this map, fails the lint at once.
 */
export const CORE_LAYERS = {
  graph: [],
  events: [],
  site: [],
  scheduling: ['graph'],
  'task-graph': ['graph', 'scheduling', 'site'],
  'group-deployment': ['graph', 'site', 'task-graph'],
  'rolling-upgrade': ['scheduling', 'site'],
  environments: ['rolling-upgrade', 'site'],
  'site-file': ['environments', 'site'],
  'run-schedules': ['group-deployment', 'rolling-upgrade'],
};

/**
 * What each subfolder of `layers` may import: the subfolders it names and, transitively, theirs.
 * Throws on a name that is not a subfolder and on a cycle, naming it (`a -> b -> a`).
 */
export function allowedCoreImports(layers) {
  const allowed = {};
  const reach = (folder, chain) => {
    if (!(folder in layers)) throw new Error(`core/ layers: '${chain.at(-2)}' names '${folder}', which is not one of core's subfolders`);
    if (chain.indexOf(folder) !== chain.length - 1) throw new Error(`core/ layers form a cycle: ${chain.slice(chain.indexOf(folder)).join(' -> ')}`);
    allowed[folder] ??= [...new Set(layers[folder].flatMap((below) => [below, ...reach(below, [...chain, below])]))].sort();
    return allowed[folder];
  };
  for (const folder of Object.keys(layers)) reach(folder, [folder]);
  return allowed;
}

/** The subfolders of core/ on disk: each must be a layer or a leaf of CORE_LAYERS. */
function coreSubfolders() {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return readdirSync(path.join(here, 'core'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
}

/** The no-restricted-imports pattern group of a folder of FOLDERS: every other folder not `below` it, plus `also`. */
function folderPatterns(folder, { below, also = [], why }) {
  const forbidden = FOLDERS.filter((other) => other !== folder && !below.includes(other) && !folder.startsWith(`${other}/`));
  // From inside lambdas/ the other half is reached as ../entrypoints: its own name is ruled too.
  const names = forbidden.flatMap((other) => (other.includes('/') && folder.split('/')[0] === other.split('/')[0] ? [other, other.split('/').pop()] : [other]));
  const patterns = names.flatMap((other) => [`**/${other}`, `**/${other}/**`]);
  return { group: [...patterns, ...also], message: `${folder}/ imports only ${below.join(', ')}: ${why}.` };
}

/**
 * One no-restricted-imports rule per folder: every other folder of FOLDERS that is not `below` it is
 * forbidden (by relative path: the project imports its own files relatively), plus `also`. core/ gets
 * one rule per subfolder (a later rule for the same file replaces an earlier one, so each carries
 * core's patterns too): a subfolder imports only those below it in CORE_LAYERS, core's own files none.
 */
function layers(rules) {
  return Object.entries(rules).flatMap(([folder, spec]) => {
    const patterns = folderPatterns(folder, spec);
    const rule = (files, ...more) => ({ files, rules: { 'no-restricted-imports': ['error', { patterns: [patterns, ...more] }] } });
    if (folder !== 'core') return [rule([`${folder}/**/*.ts`])];
    const allowed = allowedCoreImports(CORE_LAYERS);
    const undeclared = coreSubfolders().filter((sub) => !(sub in CORE_LAYERS));
    if (undeclared.length > 0) throw new Error(`core/${undeclared[0]}/ is not in CORE_LAYERS (eslint.config.js): declare it a leaf or a layer`);
    const subfolders = Object.keys(CORE_LAYERS);
    // Folder names are kebab-case: nothing in them needs escaping in a regular expression.
    const alternatives = (names) => names.join('|');
    // From a subfolder's file another subfolder is `../name` (`../../name` from a folder inside it); from core's own files, `./name`.
    const subfolderRule = (sub) => {
      const forbidden = subfolders.filter((other) => other !== sub && !allowed[sub].includes(other));
      if (forbidden.length === 0) return rule([`core/${sub}/**/*.ts`]);
      const message =
        allowed[sub].length > 0
          ? `core/${sub}/ imports only ${allowed[sub].map((name) => `core/${name}/`).join(', ')} of core's subfolders (CORE_LAYERS in eslint.config.js).`
          : `core/${sub}/ is a leaf of CORE_LAYERS (eslint.config.js): it imports none of core's subfolders.`;
      return rule([`core/${sub}/**/*.ts`], { regex: `^(\\.\\./)+(${alternatives(forbidden)})(/|$)`, message });
    };
    return [
      rule(['core/*.ts'], {
        regex: `^\\./(${alternatives(subfolders)})(/|$)`,
        message: "core's own files (errors.ts, validation.ts, ...) import none of core's subfolders: they lie below them all.",
      }),
      ...subfolders.map(subfolderRule),
    ];
  });
}

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', 'coverage/', 'dist/', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['scripts/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { process: 'readonly', console: 'readonly', require: 'readonly', module: 'writable' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['bin/*.js', 'scripts/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  // The arrows of the architecture (README "Folders"): each folder imports only the folders below it.
  // A wrong arrow fails `npm run lint` (test/architecture/import-rules.test.ts shows one does).
  ...layers({
    core: {
      below: ['contracts'],
      also: ['@aws-sdk/*', 'aws-cdk-lib', 'node:http', 'node:fs', 'node:fs/promises'],
      why: 'the domain core stays pure: no I/O, no AWS SDK, nothing but core/ and contracts/',
    },
    ports: { below: ['core', 'contracts'], why: 'ports are the interfaces the domain needs of the world' },
    time: { below: ['core'], why: 'simulated and virtual time serve the simulator and the local engine alike' },
    adapters: { below: ['core', 'ports', 'contracts'], why: 'adapters implement the ports; they never know the simulator or the clients' },
    simulator: { below: ['core', 'ports', 'adapters', 'time', 'contracts'], why: 'the simulated site is a site: it knows nothing of the control plane' },
    'control-plane': { below: ['core', 'ports', 'adapters', 'contracts'], why: 'the control plane is shared by every entry point and imports none' },
    'lambdas/activities': {
      below: ['core', 'ports', 'adapters', 'control-plane', 'contracts'],
      why: 'the workflow activities run in Lambda: never the local engine, the simulator or an entry point',
    },
    api: {
      below: ['core', 'ports', 'control-plane', 'contracts'],
      why: 'the REST API runs in Lambda and in `rollout serve`: never the local engine or the simulator',
    },
    'lambdas/entrypoints': {
      below: ['core', 'ports', 'adapters', 'control-plane', 'lambdas/activities', 'api', 'contracts'],
      why: 'the deployed entry points: never the local engine or the simulator',
    },
    local: {
      below: ['core', 'ports', 'adapters', 'control-plane', 'lambdas/activities', 'api', 'simulator', 'time', 'contracts'],
      why: 'the local stand-ins for AWS run the activities as Lambda would',
    },
    infra: { below: ['core', 'adapters', 'contracts'], why: 'the CDK app bundles the entry points by path; it imports none of the runtime' },
    cli: {
      below: ['core', 'ports', 'adapters', 'control-plane', 'lambdas/activities', 'api', 'simulator', 'local', 'time', 'contracts'],
      why: 'the CLI composes everything below it but the deployed entry points',
    },
  }),
  {
    // The tools are not tests: what they share with the tests (the real-Slurm harness) lives under scripts/, so that
    // `npm run slurm:start` or a benchmark never depends on the test folder. Product folders refuse test/ by their rules above.
    files: ['bench/**/*.ts', 'scripts/**/*.ts', 'scripts/**/*.mjs', 'bin/**/*.js'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/test', '**/test/**'],
              message: 'bench/, scripts/ and bin/ are tools, not tests: they import nothing of test/ (shared helpers live in scripts/).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['contracts/**/*.ts'],
    rules: {
      // The contracts are shared by infra, engine and Lambdas: they import nothing but file-path helpers.
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(?!node:(path|url)$|\\./)', message: 'contracts/ imports nothing but node:path, node:url and itself' }] },
      ],
    },
  },
);
