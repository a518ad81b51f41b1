/**
 * What a process that never serves an agent does not pay for: the MCP SDK (its zod schemas and
 * the tools' JSON Schemas, ~12.7 MB of idle RSS) is loaded by the first request to /mcp, not at
 * start (src/mcp/route.ts); the PostgreSQL driver is never loaded by a SQLite process. Checked
 * on the real process with a module-load recorder.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningService, startService } from "../support/process.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const RECORDER = pathToFileURL(path.join(ROOT, "test/cli/recordLoads.mjs")).href

describe("lazy parts of the gateway process", () => {
  let dir: string
  let service: RunningService
  const loads = () => readFileSync(path.join(dir, "loads.txt"), "utf8").split("\n").filter(Boolean)
  const sdkLoaded = () => loads().some((url) => url.includes("node_modules/@modelcontextprotocol/sdk/"))

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "svc-lazy-"))
    service = await startService(
      { SVC_DATABASE_URL: `file:${path.join(dir, "workspace.db")}`, SVC_ADMIN_PORT: "off", RECORD_LOADS_FILE: path.join(dir, "loads.txt") },
      "src/main.ts",
      "PORT",
      ["--import", RECORDER]
    )
  }, 60_000)

  afterAll(async () => {
    await service?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it("serves the API without loading the MCP SDK, and loads it on the first /mcp request", async () => {
    // The recorder works: the gateway's own modules were seen.
    expect(loads().some((url) => url.endsWith("/src/gateway/Gateway.ts"))).toBe(true)
    expect((await fetch(`${service.url}/v1/entities`)).status).toBe(200)
    expect(sdkLoaded()).toBe(false)
    // A SQLite process never loads the PostgreSQL driver (src/workspace/embedded/pgUrl.ts).
    expect(loads().some((url) => /node_modules\/(pg|@effect\/sql-pg)\//.test(url))).toBe(false)
    // Nor, until their first use, the confusables table, the linear regular-expression engine
    // or the media-type tables.
    expect(loads().filter((url) => /node_modules\/(unhomoglyph|re2js|mime)\//.test(url))).toEqual([])

    const res = await fetch(`${service.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
    })
    // No key: the tool server answers (loaded now), 401 with its challenge.
    expect(res.status).toBe(401)
    expect(res.headers.get("www-authenticate")).toContain("Bearer")
    expect(sdkLoaded()).toBe(true)
  })
})

describe("the built gateway's Node builtins", () => {
  let dir: string
  let service: RunningService
  const out = () => path.join(dir, "builtins.txt")

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "svc-builtins-"))
    service = await startService(
      { SVC_DATABASE_URL: `file:${path.join(dir, "workspace.db")}`, RECORD_BUILTINS_FILE: out() },
      undefined,
      "PORT",
      ["--import", pathToFileURL(path.join(ROOT, "test/ops/recordBuiltins.mjs")).href]
    )
  }, 60_000)

  afterAll(async () => {
    await service?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it("an idle process has not loaded Node's bundled undici or http2", async () => {
    // An ES module import of node:http reads its lazy WebSocket getter, which loads undici
    // (scripts/build.mjs hands http to the bundle through require).
    expect((await fetch(`${service.url}/v1/health`)).status).toBe(200)
    service.kill("SIGUSR2")
    await expect.poll(() => existsSync(out()), { timeout: 10_000 }).toBe(true)
    const builtins = readFileSync(out(), "utf8")
    expect(builtins).toContain("NativeModule http\n")
    expect(builtins).not.toContain("internal/deps/undici/undici")
    expect(builtins).not.toContain("NativeModule http2")
  })
})
