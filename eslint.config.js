import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
  'test',
];

/**
 * One no-restricted-imports rule per folder: every other folder of FOLDERS that is not `below` it is
 * forbidden (by relative path: the project imports its own files relatively), plus `also`.
 */
function layers(rules) {
  return Object.entries(rules).map(([folder, { below, also = [], why }]) => {
    const forbidden = FOLDERS.filter((other) => other !== folder && !below.includes(other) && !folder.startsWith(`${other}/`));
    // From inside lambdas/ the other half is reached as ../entrypoints: its own name is ruled too.
    const names = forbidden.flatMap((other) =>
      other.includes('/') && folder.split('/')[0] === other.split('/')[0] ? [other, other.split('/').pop()] : [other],
    );
    const patterns = names.flatMap((other) => [`**/${other}`, `**/${other}/**`]);
    return {
      files: [`${folder}/**/*.ts`],
      rules: {
        'no-restricted-imports': ['error', { patterns: [{ group: [...patterns, ...also], message: `${folder}/ imports only ${below.join(', ')}: ${why}.` }] }],
      },
    };
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
