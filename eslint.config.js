import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
  {
    files: ['core/**/*.ts'],
    rules: {
      // The domain core stays pure: no AWS SDK, no network, no site adapters.
      'no-restricted-imports': ['error', { patterns: ['@aws-sdk/*', 'aws-cdk-lib', '**/adapters/**', '**/ports/**', '**/lambdas/**', '**/engine/**', '**/simulator/**', '**/cli/**', 'node:http', 'node:fs', 'node:fs/promises'] }],
    },
  },
  {
    files: ['contracts/**/*.ts'],
    rules: {
      // The contracts are shared by infra, engine and Lambdas: they import nothing but file-path helpers.
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(?!node:(path|url)$|\\./)', message: 'contracts/ imports nothing but node:path, node:url and itself' }] }],
    },
  },
);
