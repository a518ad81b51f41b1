/**
 * The order files start in: longest first, so that with two workers the last files to start
 * are short ones and neither worker sits idle while the other runs a 40 s file at the end; and
 * a file that mostly waits (on a stall, a pace, a retry schedule, an idle collection) never
 * next to another such file, because two of them together leave the cores idle: with plain
 * longest first, the run's middle minutes read 40-90% idle (`vmstat 5`) while files like
 * refusedBodies, idleMemory and deadlines (under a third of their wall time on a core) ran
 * side by side, 20% idle over the whole run.
 *
 * Vitest sorts by its results cache (node_modules/.vite/vitest/…/results.json) when it has one,
 * but a clean clone has none, and then it sorts by file size: a one-test file of 45 s
 * (test/faults/drainRounds.test.ts) is small and started near the end. Here each file's duration
 * is the cache's when it has one, else the committed one (test/support/durations.json, from a
 * clean-clone run: `node test/support/writeDurations.mjs` rewrites it from the cache after a
 * full run, with the CPU each file cost from a run with TEST_CPU_LOG, ./cpuPerFile.ts, the
 * run's Chromium and PostgreSQL counted for the files that use them); a file
 * in neither (a new one) is taken as long and starts first. Files that failed last time still
 * start first, as in vitest's own order.
 */
import { readFileSync } from "node:fs"
import { relative } from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"

/** A file's wall time and the CPU it cost (its worker and the processes it started), in ms. */
export interface Measured {
  readonly ms: number
  readonly cpuMs?: number | undefined
}

/** The committed measures; none (every file then unknown, so by the cache alone) if the list is unreadable. */
const readCommitted = (): Readonly<Record<string, Measured>> => {
  try {
    const raw = JSON.parse(readFileSync(new URL("./durations.json", import.meta.url), "utf8")) as Record<string, number | [number, number]>
    return Object.fromEntries(Object.entries(raw).map(([file, m]) => [file, typeof m === "number" ? { ms: m } : { ms: m[0], cpuMs: m[1] }]))
  } catch {
    return {}
  }
}

export const committed = readCommitted()

/** A file that keeps a core busy less than half its wall time. */
const WAITS_BELOW = 0.5

/** What a file not yet measured is taken to last in the plan below (it starts first anyway). */
const UNKNOWN_MS = 20_000

interface Entry {
  readonly spec: TestSpecification
  readonly failed: boolean
  readonly ms: number
  readonly waits: boolean
}

/**
 * Plans the order for `workers` workers taking the next file as each frees: longest first,
 * except that a worker freeing while every other one runs a waiting file takes the longest
 * file that does not wait.
 */
export const plan = <E extends { readonly ms: number; readonly waits: boolean }>(sorted: ReadonlyArray<E>, workers: number): Array<E> => {
  const pending = [...sorted]
  const order: Array<E> = []
  let running: Array<{ readonly end: number; readonly waits: boolean }> = []
  let now = 0
  while (pending.length > 0) {
    if (running.length >= workers) {
      running.sort((a, b) => a.end - b.end)
      now = running[0]!.end
      running = running.slice(1)
    }
    const othersWait = running.length > 0 && running.every((r) => r.waits)
    const busy = othersWait ? pending.findIndex((e) => !e.waits) : -1
    const [next] = pending.splice(busy === -1 ? 0 : busy, 1)
    order.push(next!)
    running.push({ end: now + (Number.isFinite(next!.ms) ? next!.ms : UNKNOWN_MS), waits: next!.waits })
  }
  return order
}

export class LongestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const cache = this.ctx.cache
    const known = (spec: TestSpecification) => {
      const result = cache.getTestSpecificationResult(spec)
      const name = relative(spec.project.config.root, spec.moduleId).split("\\").join("/")
      const measured = committed[name]
      const cpuMs = measured?.cpuMs
      return {
        failed: result?.failed === true,
        ms: result?.duration ?? measured?.ms ?? Number.POSITIVE_INFINITY,
        waits: measured !== undefined && cpuMs !== undefined && cpuMs < WAITS_BELOW * measured.ms
      }
    }
    const keyed: Array<Entry> = files.map((spec) => ({ spec, ...known(spec) }))
    keyed.sort((a, b) =>
      a.spec.project.name !== b.spec.project.name
        ? (a.spec.project.name < b.spec.project.name ? -1 : 1)
        : a.failed !== b.failed
        ? (a.failed ? -1 : 1)
        : b.ms - a.ms || (a.spec.moduleId < b.spec.moduleId ? -1 : 1))
    const workers = Number(this.ctx.config.maxWorkers) || 1
    // Planned per project, in the projects' order (vitest runs a project's files together),
    // last run's failures first as they are.
    const projects = [...new Set(keyed.map((k) => k.spec.project.name))]
    return projects.flatMap((name) => {
      const own = keyed.filter((k) => k.spec.project.name === name)
      return [...own.filter((k) => k.failed), ...plan(own.filter((k) => !k.failed), workers)]
    }).map((k) => k.spec)
  }
}
