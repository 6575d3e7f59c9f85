import { defineConfig } from 'vitest/config';

/**
 * `npm run test:topology`: docker-compose.yml's production topology on this machine (test/topology/topology.ts)
 * and faults in its parts. Not part of `npm test`: it builds Temporal's server the first time and takes minutes.
 */
export default defineConfig({
  test: {
    include: ['test/topology/**/*.topology.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 900_000,
    teardownTimeout: 120_000,
  },
});
