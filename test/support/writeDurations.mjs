// Rewrites test/support/durations.json (the order test/support/sequencer.ts starts files in on
// a clean clone) from vitest's results cache of the last run: run the whole suite, then
// `node test/support/writeDurations.mjs` (or name another checkout's results.json, such as a
// clean clone's). Durations are rounded to a tenth of a second; files gone are left out.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))
const cacheDir = join(root, "node_modules/.vite/vitest")
const caches = process.argv[2] !== undefined ? [process.argv[2]] : readdirSync(cacheDir).map((hash) => join(cacheDir, hash, "results.json"))
const durations = {}
for (const path of caches) {
  let cache
  try {
    cache = JSON.parse(readFileSync(path, "utf8"))
  } catch {
    continue
  }
  for (const project of Object.values(cache.projects ?? {})) {
    for (const [file, result] of Object.entries(project.files ?? {})) {
      if (typeof result.duration === "number" && existsSync(join(root, file))) durations[file] = Math.max(100, Math.round(result.duration / 100) * 100)
    }
  }
}
const sorted = Object.fromEntries(Object.entries(durations).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)))
writeFileSync(join(root, "test/support/durations.json"), JSON.stringify(sorted, null, 1) + "\n")
console.log(`test/support/durations.json: ${Object.keys(sorted).length} files`)
