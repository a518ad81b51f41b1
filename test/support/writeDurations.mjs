// Rewrites test/support/durations.json (the order test/support/sequencer.ts starts files in on
// a clean clone) from vitest's results cache of the last run: run the whole suite, then
// `node test/support/writeDurations.mjs` (or name another checkout's results.json, such as a
// clean clone's). With `--cpu <log>`, the log a run with TEST_CPU_LOG=<log> wrote
// (test/support/cpuPerFile.ts), each file's entry is [wall ms, CPU ms] instead of its wall ms,
// both from that log (the CPU of the run's Chromium or PostgreSQL meanwhile counted for the
// files that use them). Times are rounded to a tenth of a second; files gone are left out.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))
const args = process.argv.slice(2)
const cpuAt = args.indexOf("--cpu")
const cpuLog = cpuAt === -1 ? undefined : args.splice(cpuAt, 2)[1]
const round = (ms) => Math.max(100, Math.round(ms / 100) * 100)
const durations = {}
if (cpuLog !== undefined) {
  for (const line of readFileSync(cpuLog, "utf8").split("\n")) {
    if (line.trim() === "") continue
    const { file, wallMs, cpuMs, sharedMs = 0 } = JSON.parse(line)
    // The run's Chromium and PostgreSQL work for the files that use them.
    const shared = file.startsWith("test/console/") || file.endsWith(".pg.test.ts") ? sharedMs : 0
    if (existsSync(join(root, file))) durations[file] = [round(wallMs), round(cpuMs + shared)]
  }
} else {
  const cacheDir = join(root, "node_modules/.vite/vitest")
  const caches = args[0] !== undefined ? [args[0]] : readdirSync(cacheDir).map((hash) => join(cacheDir, hash, "results.json"))
  for (const path of caches) {
    let cache
    try {
      cache = JSON.parse(readFileSync(path, "utf8"))
    } catch {
      continue
    }
    for (const project of Object.values(cache.projects ?? {})) {
      for (const [file, result] of Object.entries(project.files ?? {})) {
        if (typeof result.duration === "number" && existsSync(join(root, file))) durations[file] = round(result.duration)
      }
    }
  }
}
const wall = (m) => (typeof m === "number" ? m : m[0])
const sorted = Object.fromEntries(Object.entries(durations).sort((a, b) => wall(b[1]) - wall(a[1]) || (a[0] < b[0] ? -1 : 1)))
writeFileSync(join(root, "test/support/durations.json"), JSON.stringify(sorted, null, 1).replace(/\[\n\s+(\d+),\n\s+(\d+)\n\s+\]/g, "[$1, $2]") + "\n")
console.log(`test/support/durations.json: ${Object.keys(sorted).length} files`)
