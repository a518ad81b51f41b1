/**
 * What a process that never serves an agent does not pay for: the MCP SDK (its zod schemas and
 * the tools' JSON Schemas, ~12.7 MB of idle RSS) is loaded by the first request to /mcp, not at
 * start (src/mcp/route.ts); the PostgreSQL driver is never loaded by a SQLite process; nor
 * node:tls and node:https (the CA certificates) before the first outbound https request; and the
 * collection after start is the memory-reducing one. Checked on the real process with a
 * module-load recorder and V8's trace of its collections.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService, startService } from "../support/process.js"
import { ACME_US } from "../files/builtGateway.js"
import { LOOPBACK_CERT, LOOPBACK_KEY } from "./loopbackTls.js"

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

describe("the built gateway's TLS, loaded by its first outbound https request", () => {
  let dir: string
  let service: RunningService
  let source: https.Server
  let port: number
  const out = () => path.join(dir, "builtins.txt")
  /** The builtins the process has loaded by now (recordBuiltins.mjs writes them on SIGUSR2). */
  const builtinsNow = async () => {
    rmSync(out(), { force: true })
    service.kill("SIGUSR2")
    await expect.poll(() => existsSync(out()), { timeout: 10_000 }).toBe(true)
    return readFileSync(out(), "utf8")
  }

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "svc-tls-"))
    writeFileSync(path.join(dir, "ca.pem"), LOOPBACK_CERT)
    source = https.createServer({ key: LOOPBACK_KEY, cert: LOOPBACK_CERT }, (_req, res) => res.end("a,b\n1,2\n"))
    await new Promise<void>((resolve) => source.listen(0, "127.0.0.1", resolve))
    port = (source.address() as AddressInfo).port
    service = await startService(
      {
        SVC_DATABASE_URL: `file:${path.join(dir, "workspace.db")}`,
        RECORD_BUILTINS_FILE: out(),
        // The gateway trusts the loopback source's certificate, and may reach it although private.
        NODE_EXTRA_CA_CERTS: path.join(dir, "ca.pem"),
        SVC_INGEST_URL_ALLOW: `127.0.0.1:${port}`
      },
      undefined,
      "PORT",
      // --trace-gc: V8's line for each collection, for the collection after start (last test).
      ["--import", pathToFileURL(path.join(ROOT, "test/ops/recordBuiltins.mjs")).href, "--trace-gc"]
    )
  }, 60_000)

  afterAll(async () => {
    await service?.stop()
    source?.closeAllConnections()
    await new Promise((resolve) => source?.close(resolve))
    rmSync(dir, { recursive: true, force: true })
  })

  it("an idle process has not loaded node:tls or node:https (loading tls reads every trusted CA certificate); an https ingest loads them and fetches", async () => {
    expect((await fetch(`${service.url}/v1/health`)).status).toBe(200)
    const idle = await builtinsNow()
    expect(idle).toContain("NativeModule http\n")
    expect(idle).not.toContain("NativeModule tls\n")
    expect(idle).not.toContain("NativeModule https\n")

    const task = await http("POST", `${service.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "bank-reconciliation", context: { accountId: "1000" } })
    expect(task.status).toBe(201)
    const ingest = await http("POST", `${service.url}/v1/tasks/${task.body.id}/files/ingest`, {
      source: "statements",
      fileName: "s.csv",
      fileRef: { provider: "url", url: `https://127.0.0.1:${port}/s.csv` }
    })
    expect(ingest.status, ingest.text).toBe(201)
    const after = await builtinsNow()
    expect(after).toContain("NativeModule tls\n")
    expect(after).toContain("NativeModule https\n")
  }, 60_000)

  it("the collection just after start is V8's memory-reducing one, and shrinks the committed heap", async () => {
    // A plain full collection leaves start-up's sparse old-generation pages committed, about
    // 4.5 MB of an idle cell's private memory (src/lib/reducingCollection.ts, bench/RESULTS.md).
    const afterListening = () => service.output().slice(service.output().indexOf("tenant gateway listening on"))
    await expect.poll(afterListening, { timeout: 15_000 }).toMatch(/Mark-Compact \(reduce\)/)
    // V8's line: "used (committed) -> used (committed) MB"; committed after < before.
    const line = /Mark-Compact \(reduce\) [\d.]+ \(([\d.]+)\) -> [\d.]+ \(([\d.]+)\) MB/.exec(afterListening())
    expect(line).not.toBeNull()
    expect(Number(line![2])).toBeLessThan(Number(line![1]))
  })
})
