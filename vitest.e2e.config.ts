import { defineConfig } from "vitest/config"

// Only the process-level suite (also part of `npm test`): `npm run test:e2e`.
export default defineConfig({
  test: {
    // One PostgreSQL server for the run (*.pg.test.ts files use it).
    globalSetup: ["test/support/pgGlobalSetup.ts"],
    include: ["test/e2e/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000
  }
})
