/**
 * The order files start in: longest first, so that with two workers the last files to start
 * are short ones and neither worker sits idle while the other runs a 40 s file at the end.
 *
 * Vitest sorts by its results cache (node_modules/.vite/vitest/…/results.json) when it has one,
 * but a clean clone has none, and then it sorts by file size: a one-test file of 45 s
 * (test/faults/drainRounds.test.ts) is small and started near the end. Here each file's duration
 * is the cache's when it has one, else the committed one (test/support/durations.json, from a
 * clean-clone run: `node test/support/writeDurations.mjs` rewrites it from the cache after a
 * full run); a file in neither (a new one) is taken as long and starts first. Files that failed
 * last time still start first, as in vitest's own order.
 */
import { readFileSync } from "node:fs"
import { relative } from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"

/** The committed durations; none (every file then unknown, so by the cache alone) if the list is unreadable. */
const readCommitted = (): Readonly<Record<string, number>> => {
  try {
    return JSON.parse(readFileSync(new URL("./durations.json", import.meta.url), "utf8")) as Record<string, number>
  } catch {
    return {}
  }
}

export const committed = readCommitted()

export class LongestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const cache = this.ctx.cache
    const known = (spec: TestSpecification) => {
      const result = cache.getTestSpecificationResult(spec)
      const name = relative(spec.project.config.root, spec.moduleId).split("\\").join("/")
      return { failed: result?.failed === true, ms: result?.duration ?? committed[name] ?? Number.POSITIVE_INFINITY }
    }
    const keyed = files.map((spec) => ({ spec, ...known(spec) }))
    keyed.sort((a, b) =>
      a.spec.project.name !== b.spec.project.name
        ? (a.spec.project.name < b.spec.project.name ? -1 : 1)
        : a.failed !== b.failed
        ? (a.failed ? -1 : 1)
        : b.ms - a.ms || (a.spec.moduleId < b.spec.moduleId ? -1 : 1))
    return keyed.map((k) => k.spec)
  }
}
