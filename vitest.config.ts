import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    // One PostgreSQL server for the run (*.pg.test.ts files use it).
    globalSetup: ["test/support/pgGlobalSetup.ts"],
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
