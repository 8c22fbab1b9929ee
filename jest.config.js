// Jest runs in ESM mode (@kubernetes/client-node 2.x is ESM-only). TypeScript
// is transpiled per file by ts-jest; `npm run typecheck` does the type check.
const tsTransform = {
  '^.+\\.ts$': ['ts-jest', { useESM: true, diagnostics: false }],
};
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: tsTransform,
  testEnvironment: 'node',
};

/** @type {import('jest').Config} */
export default {
  // Integration waits poll with their own deadlines; this is only a backstop.
  testTimeout: 120000,
  reporters: ['default', '<rootDir>/test/summary-reporter.cjs'],
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      // One real control plane per jest process (npm test runs several, one per
      // lane: hack/test-lanes.ts); files run one at a time within it because
      // controllers and the garbage collector see cluster-wide state.
      globalSetup: '<rootDir>/test/integration/global-setup.mjs',
      globalTeardown: '<rootDir>/test/integration/global-teardown.mjs',
      slowTestThreshold: 30,
    },
  ],
};
