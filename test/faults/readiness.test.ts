/**
 * Readiness beside liveness: GET /readyz tells a healthy cell from a wrong tenant, a
 * dead or stalled upstream and a draining process, while /v1/health stays ok throughout.
 * Real processes; the upstream is `npm run workspace` behind the fault proxy.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Drain } from "../../src/http/server/Drain.js"
import { ProcessDrain } from "../../src/lib/ProcessDrain.js"
import { READINESS_CACHE_MS } from "../../src/gateway/Readiness.js"
import { makeGateway, raw } from "../support/gateway.js"
import { http, type RunningService, startService, WORKSPACE_ENTRY } from "../support/process.js"
import { type FaultProxy, startFaultProxy } from "./proxy.js"
import { waitFor } from "../support/waitFor.js"

const FIXTURE = fileURLToPath(new URL("../fixtures/example.json", import.meta.url))

let dir: string
const running: Array<RunningService> = []
const proxies: Array<FaultProxy> = []
const start = async (env: Record<string, string>, entry?: string, portVariable?: string) => {
  const service = await startService({ SVC_SEED_FILE: FIXTURE, SVC_ADMIN_PORT: "off", ...env }, entry, portVariable)
  running.push(service)
  return service
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gateway-faults-ready-"))
})
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()))
  await Promise.all(proxies.map((p) => p.close()))
  rmSync(dir, { recursive: true, force: true })
})

/** Polls /readyz until it answers `status` (the verdict is cached about a second), at most `ms`. */
const readyz = async (base: string, status: number, ms = 5_000) => {
  const end = Date.now() + ms
  for (;;) {
    const res = await http("GET", `${base}/readyz`)
    if (res.status === status || Date.now() > end) return res
    await new Promise((r) => setTimeout(r, 100))
  }
}

const notReady = (res: { status: number; body: any; headers: Headers }, text: string | RegExp) => {
  expect(res.status).toBe(503)
  expect(res.body).toEqual({ statusCode: 503, message: expect.stringMatching(text), error: "Service Unavailable" })
  // Every 503 carries the README's Retry-After.
  expect(res.headers.get("retry-after")).toBe("1")
}

describe("GET /readyz on a real process", { timeout: 60_000 }, () => {
  it("a tenant the workspace does not know: 503 naming SVC_TENANT_SLUG, a start-up warning, health still ok", async () => {
    const gw = await start({ SVC_DATABASE_URL: `file:${join(dir, "wrong.db")}`, SVC_TENANT_SLUG: "nobody" })
    expect((await http("GET", `${gw.url}/v1/health`)).body).toEqual({ status: "ok" })
    const res = await http("GET", `${gw.url}/readyz`)
    notReady(res, /^Not ready: tenant "nobody" \(SVC_TENANT_SLUG\) is not known/)
    expect(res.headers.get("cache-control")).toBe("no-store")
    await waitFor("the not-ready warning in the log", () => /not ready:/.test(gw.output()), { timeoutMs: 5_000, seen: gw.output })
    // A warning, in the readable or the JSON log format.
    expect(gw.output()).toMatch(/(WARN|"level":"warn").*not ready: tenant \\?"nobody\\?" \(SVC_TENANT_SLUG\)/)
  })

  it("in front of a workspace service: 200 while it answers, 503 when it is reset, refused or stalled, 200 again after", async () => {
    const ws = await start({ SVC_DATABASE_URL: `file:${join(dir, "ws.db")}` }, WORKSPACE_ENTRY, "SVC_WORKSPACE_PORT")
    const proxy = await startFaultProxy(ws.url)
    proxies.push(proxy)
    let lookups = 0
    proxy.observe((direction, chunk) => {
      if (direction === "up") lookups += chunk.toString("latin1").split("GET /workspace/tenants/by-slug/").length - 1
    })
    const gw = await start({ SVC_WORKSPACE_URL: proxy.url, SVC_TENANT_SLUG: "acme", SVC_WORKSPACE_RETRIES: "0" })
    expect((await readyz(gw.url, 200)).body).toEqual({ status: "ready" })

    // Probes in a burst share one cached lookup: they do not hammer the workspace.
    const before = lookups
    const burst = await Promise.all(Array.from({ length: 20 }, () => http("GET", `${gw.url}/readyz`)))
    expect(burst.every((r) => r.status === 200)).toBe(true)
    expect(lookups - before).toBeLessThanOrEqual(1)

    await proxy.set({ kind: "reset" })
    notReady(await readyz(gw.url, 503, READINESS_CACHE_MS + 3_000), /^Not ready: the workspace service at .* \(SVC_WORKSPACE_URL\) is unreachable/)
    expect((await http("GET", `${gw.url}/v1/health`)).body).toEqual({ status: "ok" })

    await proxy.set({ kind: "refuse" })
    await new Promise((r) => setTimeout(r, READINESS_CACHE_MS + 100))
    notReady(await http("GET", `${gw.url}/readyz`), /unreachable/)

    await proxy.set({ kind: "pass" })
    expect((await readyz(gw.url, 200, READINESS_CACHE_MS + 3_000)).status).toBe(200)

    await proxy.set({ kind: "stall" })
    await new Promise((r) => setTimeout(r, READINESS_CACHE_MS + 100))
    notReady(await http("GET", `${gw.url}/readyz`), /did not answer within \d+ ms/)
    await proxy.set({ kind: "pass" })
    expect((await readyz(gw.url, 200, READINESS_CACHE_MS + 3_000)).status).toBe(200)
  })
})

describe("GET /readyz in process", () => {
  it("turns 503 the moment the drain starts, while health stays ok", async () => {
    const drain = new Drain()
    const { layer } = makeGateway()
    await Effect.runPromise(
      Effect.gen(function*() {
        expect((yield* raw("GET", "/readyz")).status).toBe(200)
        yield* Effect.promise(() => drain.start(1_000))
        const res = yield* raw("GET", "/readyz")
        expect(res.status).toBe(503)
        expect(res.body).toEqual({ statusCode: 503, message: "Not ready: shutting down (draining)", error: "Service Unavailable" })
        expect((yield* raw("GET", "/v1/health")).status).toBe(200)
      }).pipe(Effect.provide(Layer.provide(layer, Layer.succeed(ProcessDrain, drain))), Effect.scoped)
    )
  })

  it("without a tenant binding: 503 naming SVC_TENANT_SLUG", async () => {
    const { layer } = makeGateway({ config: { tenantSlug: Option.none() } })
    await Effect.runPromise(
      Effect.gen(function*() {
        const res = yield* raw("GET", "/readyz")
        expect(res.status).toBe(503)
        expect(res.body.message).toBe("Not ready: this gateway is bound to no tenant (SVC_TENANT_SLUG is not set)")
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
  })
})
