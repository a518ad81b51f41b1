import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Builds the task console (dist/console) when stale: test/console serves it from real processes.
    globalSetup: ["test/console/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
