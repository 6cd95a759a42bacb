import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration files each start a server with its own database; two cores, two at a time.
    maxWorkers: 2,
  },
});
