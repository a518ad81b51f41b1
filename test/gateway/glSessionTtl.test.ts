/**
 * GL connect sessions expire (SVC_GL_SESSION_TTL_MS): on the built process with a short
 * lifetime, a session completes within it, and past it neither its connect page, nor its
 * completion, nor the adapter's webhook on the admin listener can connect the GL any more.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import { exampleFixture } from "../support/gateway.js"
import { testStore } from "../support/storeWorkspace.js"
import { http, type JsonResponse, type RunningService, startBuilt } from "../support/process.js"
import { ACME } from "../support/world.js"

const TTL_MS = 3000

let dir = ""
let gw: RunningService | undefined

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gl-ttl-"))
  gw = await startBuilt({ SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`, SVC_GL_SESSION_TTL_MS: String(TTL_MS) })
}, 60_000)
afterAll(async () => {
  await gw?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const session = async (): Promise<string> => {
  const res = await http("POST", `${gw!.url}/v1/gl/connect/session`, { serviceId: "xero" })
  expect(res.status, res.text).toBe(200)
  return res.body.consumerId as string
}
const page = (id: string) => http("GET", `${gw!.url}/workspace/gl/connect/${id}`)
const complete = (id: string) => http("POST", `${gw!.url}/workspace/gl/connect/${id}/complete`, { service: "xero" })
const webhook = (id: string) => http("POST", `${gw!.adminUrl}/workspace/gl/webhook/success`, { consumerId: id, service: "xero" })
const status = async () => (await http("GET", `${gw!.url}/v1/gl/status`)).body
const disconnect = async () => expect((await http("DELETE", `${gw!.url}/v1/gl`)).status).toBe(204)

const expectGone = (res: JsonResponse, what: string) => {
  expect([404, 410], `${what}: ${res.status} ${res.text}`).toContain(res.status)
  expect(Object.keys(res.body).sort()).toEqual(["error", "message", "statusCode"])
  expect(res.body.statusCode).toBe(res.status)
}

describe("a GL connect session", { timeout: 30_000 }, () => {
  it("completes within its lifetime, by its page or by the adapter's webhook", async () => {
    await disconnect()
    const byPage = await session()
    const byWebhook = await session()
    expect((await page(byPage)).status).toBe(200)
    expect((await complete(byPage)).status).toBe(204)
    expect(await status()).toMatchObject({ connected: true, service: "xero" })
    await disconnect()
    const hooked = await webhook(byWebhook)
    expect(hooked.status, hooked.text).toBe(204)
    expect(await status()).toMatchObject({ connected: true, service: "xero" })
    await disconnect()
  })

  it("past its lifetime answers as an unknown session and connects nothing", async () => {
    await disconnect()
    const [a, b] = [await session(), await session()]
    await new Promise((r) => setTimeout(r, TTL_MS + 1000))
    expectGone(await page(a), "page")
    expectGone(await complete(a), "complete")
    expectGone(await webhook(b), "webhook")
    expect(await status()).toMatchObject({ connected: false })
  })
})

describe("SVC_GL_SESSION_TTL_MS", () => {
  it("refuses to start with a value that is not a positive whole number of milliseconds", async () => {
    for (const bad of ["0", "-5", "15m", "1.5"]) {
      const outcome = await startBuilt({ SVC_DATABASE_URL: `file:${join(dir, "bad.db")}`, SVC_GL_SESSION_TTL_MS: bad })
        .then(async (started) => {
          await started.stop()
          return "started"
        }, (e: Error) => e.message)
      expect(outcome, bad).toMatch(/exited with[\s\S]*SVC_GL_SESSION_TTL_MS/)
    }
  }, 60_000)
})

describe("the in-process tests' store (test/support/storeWorkspace.ts)", () => {
  it("completes a session within its lifetime and not after", async () => {
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const ws = yield* testStore(exampleFixture, { glSessionTtlMs: 60_000 })
      const fresh = yield* ws.createGlSession(ACME, "xero")
      expect(yield* ws.completeGl(fresh.consumerId, "xero")).toBe(true)
      // Made two minutes ago: past this store's lifetime, well within the default 15 minutes.
      const old = yield* ws.createGlSession(ACME, "xero")
      yield* Effect.orDie(ws.sql`UPDATE gl_sessions SET created_at = ${new Date(Date.now() - 120_000).toISOString()}
        WHERE consumer_id = ${old.consumerId}`)
      expect(yield* ws.completeGl(old.consumerId, "xero")).toBe(false)
    })))
  })
})
