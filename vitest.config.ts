import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One Temporal dev server and one PostgreSQL for the whole run; each file gets its own database and queues.
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
    // The last line is a plain `N passed, N failed, N skipped`, which CI reads.
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
