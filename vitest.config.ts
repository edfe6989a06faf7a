import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two test files at a time: this machine and CI have 2 cores, and vitest 3 would otherwise use
    // one worker fewer than there are cores (one). `maxWorkers` also applies to the forks pool
    // (`poolOptions.forks.maxForks` would take precedence) and is the name vitest 4 keeps.
    maxWorkers: 2,
    // The JSON report lets CI print a plain `N passed, N failed` line (see .ci/run).
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-data/report.json' },
  },
});
