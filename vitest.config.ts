import { defineConfig } from "vitest/config"
import { LongestFirst } from "./test/support/sequencer.js"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Together: one PostgreSQL server for the run (*.pg.test.ts files use it); the gateway and
    // the task console built when stale (the built-process tests run them); one Chromium for
    // the browser tests.
    globalSetup: ["test/support/globalSetup.ts"],
    // Each file's CPU beside its wall time when TEST_CPU_LOG names a file (where the run's CPU goes).
    setupFiles: ["test/support/cpuPerFile.ts"],
    // Two files at a time on 2 cores (vitest's default is cores - 1: one file at a time). Most
    // files wait on real processes, sockets and clocks, so a second file fills that wait.
    maxWorkers: 2,
    // Each worker runs file after file instead of a fresh worker per file: the run is CPU-bound
    // (1,111 s of CPU for 1,342 s of wall on 2 cores, loaded), and a fresh worker cost each file
    // about 0.7 s of CPU (spawn, vitest's environment, effect's modules again): 28 small files
    // 30 s of CPU isolated, 11 s not. No test mocks modules, fakes timers or changes
    // process.env; each file stops its processes and servers in its own hooks. `--isolate`
    // brings a fresh worker per file back (to tell whether a failure comes from a neighbour).
    isolate: false,
    // Longest files first, also on a clean clone (no results cache): see the sequencer.
    sequence: { sequencer: LongestFirst },
    // expect.poll waits for a state (a page showing its answer); its default of 1 s ran out on
    // a loaded machine (a Chromium page's first render). A claim about time says its own bound
    // ({ timeout: 1000 } where "within a second" is what a test proves).
    expect: { poll: { timeout: 10_000 } },
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
