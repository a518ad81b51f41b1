import { defineConfig } from "vitest/config"
import { LongestFirst } from "./test/support/sequencer.js"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One PostgreSQL server for the run (*.pg.test.ts files use it); the task console built
    // (dist/console) when stale: test/console serves it from real processes.
    globalSetup: ["test/support/pgGlobalSetup.ts", "test/console/globalSetup.ts"],
    // Two files at a time on 2 cores (vitest's default is cores - 1: one file at a time). Most
    // files wait on real processes, sockets and clocks, so a second file fills that wait.
    maxWorkers: 2,
    // Longest files first, also on a clean clone (no results cache): see the sequencer.
    sequence: { sequencer: LongestFirst },
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
