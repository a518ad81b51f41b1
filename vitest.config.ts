import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One PostgreSQL server for the run (*.pg.test.ts files use it); the task console built
    // (dist/console) when stale: test/console serves it from real processes.
    globalSetup: ["test/support/pgGlobalSetup.ts", "test/console/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
