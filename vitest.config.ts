import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The JSON report lets CI print a plain `N passed, N failed` line (see .ci/run).
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-data/report.json' },
  },
});
