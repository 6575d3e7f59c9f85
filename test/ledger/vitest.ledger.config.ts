// Runs only the ledger tests, without the project-wide global setup
// (Temporal, PostgreSQL): npx vitest run --config test/ledger/vitest.ledger.config.ts
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/ledger/**/*.test.ts'],
  },
});
