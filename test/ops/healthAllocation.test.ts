/**
 * What a GET /v1/health costs the garbage collector on the built process, as `npm start` runs it
 * (request log, metrics, default settings). Allocation per request, unlike CPU time, does not
 * move with what else the machine runs: V8's own GC trace (`--trace-gc-nvp`) says how many
 * bytes were allocated between collections. The health group is built in an empty context, so
 * HttpApiBuilder does not merge a build context into each of its requests (src/handlers/health.ts:
 * with this test's client 37.3 KB per request with the merge, 28.7 KB without, when measured), and
 * the build checks an empty merge's other side first (scripts/build.mjs, contextMergePlugin: 22.5
 * KB per request without, 19.2-19.3 KB with, the request's context no longer copied).
 */
import http from "node:http"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningService, startBuilt } from "../support/process.js"

const allocatedSince = (output: string, from: number): { readonly bytes: number; readonly collections: number } => {
  let bytes = 0
  let collections = 0
  for (const m of output.slice(from).matchAll(/ allocated=(\d+)/g)) {
    bytes += Number(m[1])
    collections++
  }
  return { bytes, collections }
}

/** `total` GET /v1/health requests over `connections` keep-alive connections. */
const healthRequests = async (url: string, total: number, connections: number) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  let sent = 0
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const req = http.get(`${url}/v1/health`, { agent }, (res) => {
        res.resume()
        res.on("end", () => resolve(res.statusCode ?? 0))
      })
      req.on("error", reject)
    })
  const statuses: Array<number> = []
  await Promise.all(Array.from({ length: connections }, async () => {
    while (sent < total) {
      sent++
      statuses.push(await one())
    }
  }))
  agent.destroy()
  return statuses
}

describe("GET /v1/health on the built process", () => {
  let dir: string
  let service: RunningService

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "svc-health-alloc-"))
    service = await startBuilt({ SVC_DATABASE_URL: `file:${path.join(dir, "workspace.db")}`, SVC_ADMIN_PORT: "off" }, ["--trace-gc-nvp"])
  }, 60_000)

  afterAll(async () => {
    await service?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it("allocates under 21 KB per request (22.5 KB when an empty merge copies the request's context, 37 KB with the group's build context merged)", async () => {
    await healthRequests(service.url, 1_000, 10) // warm-up: code optimized, caches filled
    const from = service.output().length
    const n = 5_000
    const statuses = await healthRequests(service.url, n, 10)
    expect(statuses.every((s) => s === 200)).toBe(true)
    const { bytes, collections } = allocatedSince(service.output(), from)
    // 5,000 requests are about 110 MB: some 40 young collections, each telling its bytes (19 seen
    // under the whole suite's load).
    expect(collections).toBeGreaterThan(10)
    const perRequest = bytes / n
    expect(perRequest).toBeGreaterThan(5_000) // the trace was read (raw node:http itself allocates ~5.8 KB)
    expect(perRequest).toBeLessThan(21_000)
  }, 60_000)
})
