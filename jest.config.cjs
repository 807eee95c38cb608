/** Jest runs the TypeScript sources through swc (CommonJS output); middy ships ESM only (as do p-limit, yocto-queue and json-schema-ref-parser, which the OpenAPI validator loads), so they are transformed and transformed too. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  setupFiles: ['<rootDir>/test/support/setup.ts'],
  testSequencer: '<rootDir>/test/support/test-sequencer.cjs',
  // The CLI processes tests start run the compiled CLI: built from the working tree first.
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  transform: {
    '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(@middy|p-limit|yocto-queue|@apidevtools/json-schema-ref-parser)/)'],
  moduleNameMapper: { '^@middy/(core|util)$': '<rootDir>/node_modules/@middy/$1/index.js' },
  testTimeout: 60000,
  // Powertools' invoke store sets globalThis.awslambda; Jest's soft cleanup of it between files printed a
  // DeprecationWarning into whichever CLI run was capturing stderr at the time.
  testEnvironmentOptions: { globalsCleanup: 'off' },
  // Every core: on virtual time the in-process tests do not depend on load, and the CLI process tests mostly wait.
  // JEST_MAX_WORKERS raises it where most of the time is spent waiting on daemons (.ci/run: the real-Slurm files of
  // three releases wait on slurmd registrations and reboots, not on the CPU).
  maxWorkers: process.env.JEST_MAX_WORKERS ?? '100%',
};
