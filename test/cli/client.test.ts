/**
 * The client entry point (src/client/index.ts) loads the contract and nothing of the server:
 * checked on the module graph a real process resolves when it imports the entry point, and on
 * the static import graph of the sources.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { describe, expect, it } from "vitest"
import { ROOT, TSX } from "./harness.js"

const ENTRY = path.join(ROOT, "src/client/index.ts")

/** Server-side code: HTTP serving, handlers, services, the embedded workspace, drivers. */
const FORBIDDEN_SOURCES = [
  /^src\/main\.ts$/,
  /^src\/http\//,
  /^src\/handlers\//,
  /^src\/services\//,
  /^src\/files\//,
  /^src\/gateway\//,
  /^src\/config\//,
  /^src\/workspace\//,
  /^src\/domain\//,
  /^src\/upstream\/(openapi|writeOpenapi)\.ts$/
]
const FORBIDDEN_PACKAGES = [/^node:(http|https|net|http2|tls|dgram|cluster|worker_threads)$/, /@effect\/platform-node/, /@effect\/sql/, /@libsql/, /request-filtering-agent/, /@effect\/cli/]

/** What a client process may load from src: the contract, the registry contract (with its decision links), the client. */
const ALLOWED_SOURCES = [/^src\/api\//, /^src\/client\//, /^src\/upstream\/(registry|links|webhooks|errors|paths)\.ts$/]

const relative = (url: string) => (url.startsWith("file:") ? path.relative(ROOT, fileURLToPath(url)).split(path.sep).join("/") : url)

const problems = (modules: ReadonlyArray<string>) =>
  modules.filter((m) => {
    if (m.startsWith("src/")) return FORBIDDEN_SOURCES.some((re) => re.test(m)) || !ALLOWED_SOURCES.some((re) => re.test(m))
    return FORBIDDEN_PACKAGES.some((re) => re.test(m))
  })

describe("the client entry point", () => {
  it("loads no server module when a process imports it", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "svc-client-"))
    try {
      const out = path.join(dir, "loads.txt")
      const recorder = pathToFileURL(path.join(ROOT, "test/cli/recordLoads.mjs")).href
      const run = spawnSync(
        process.execPath,
        ["--import", TSX, "--import", recorder, "--input-type=module", "-e", `await import(${JSON.stringify(pathToFileURL(ENTRY).href)})`],
        { cwd: dir, env: { ...process.env, RECORD_LOADS_FILE: out }, encoding: "utf8" }
      )
      expect(run.status, run.stderr).toBe(0)
      const loaded = [...new Set(readFileSync(out, "utf8").split("\n").filter(Boolean).map(relative))]
      // The recorder saw the import: the entry point, the contract and effect itself.
      expect(loaded).toContain("src/client/index.ts")
      expect(loaded).toContain("src/api/Api.ts")
      expect(loaded.some((m) => m.includes("node_modules/effect/"))).toBe(true)
      expect(problems(loaded)).toEqual([])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)

  it("imports only the contract in its static import graph", () => {
    const seen = new Set<string>()
    const external = new Set<string>()
    const visit = (file: string) => {
      const rel = path.relative(ROOT, file).split(path.sep).join("/")
      if (seen.has(rel)) return
      seen.add(rel)
      const source = readFileSync(file, "utf8")
      for (const m of source.matchAll(/(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^"';]*?\s+from\s+)?["']([^"']+)["']/g)) {
        const spec = m[1]!
        if (/^(import|export)\s+type\s/.test(m[0].trim())) continue // erased at runtime
        if (spec.startsWith(".")) visit(path.resolve(path.dirname(file), spec.replace(/\.js$/, ".ts")))
        else external.add(spec)
      }
    }
    visit(ENTRY)
    expect(problems([...seen])).toEqual([])
    expect(problems([...external])).toEqual([])
    expect([...external].filter((s) => !s.startsWith("effect/") && !s.startsWith("@effect/platform/"))).toEqual([])
  })
})
