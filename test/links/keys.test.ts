/**
 * The key that signs decision links, on the built process and one database across restarts:
 * generated once into the database when SVC_LINK_SIGNING_KEYS is unset (links survive a
 * restart); rotated with the setting (the first key signs, all verify; a key dropped from the
 * setting ends its links); a malformed setting stops the start without printing the value.
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService, startBuilt } from "../support/process.js"
import { acmeTask, writeWorld } from "./world.js"

const PUBLIC = "https://approvals.example.test"
const ADMIN_TOKEN = randomBytes(24).toString("base64url")
const K1 = randomBytes(32).toString("base64url")
const K2 = randomBytes(32).toString("base64url")

let dir = ""
let seed = ""
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "links-keys-"))
  seed = writeWorld(dir)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const start = (env: Record<string, string> = {}) =>
  startBuilt({
    SVC_TENANT_SLUG: "acme",
    SVC_DATABASE_URL: `file:${join(dir, "w.db")}`,
    SVC_SEED_FILE: seed,
    SVC_PUBLIC_URL: PUBLIC,
    SVC_ADMIN_TOKEN: ADMIN_TOKEN,
    ...env
  })

/** Runs `f` against a process started with `env`, then stops it. */
const withGateway = async <A>(env: Record<string, string>, f: (gw: RunningService) => Promise<A>): Promise<A> => {
  const gw = await start(env)
  try {
    return await f(gw)
  } finally {
    await gw.stop()
  }
}

const approveLink = async (gw: RunningService, taskId: string) => {
  const res = await http("POST", `${gw.adminUrl}/workspace/links`, { tenantSlug: "acme", taskId, actor: "ann@acme.example" }, {
    authorization: `Bearer ${ADMIN_TOKEN}`
  })
  expect(res.status, res.text).toBe(201)
  return (res.body.approveUrl as string).slice(PUBLIC.length)
}

const opens = async (gw: RunningService, path: string) => (await http("GET", gw.url + path, undefined, { accept: "application/json" })).status

describe("signing keys", { timeout: 60_000 }, () => {
  it("generated once into the database: a link works after a restart", async () => {
    const link = await withGateway({}, (gw) => approveLink(gw, acmeTask(0)))
    await withGateway({}, async (gw) => expect(await opens(gw, link)).toBe(200))
    // The setting replaces that key: the database key's links stop working.
    await withGateway({ SVC_LINK_SIGNING_KEYS: K1 }, async (gw) => expect(await opens(gw, link)).toBe(404))
  })

  it("rotated with SVC_LINK_SIGNING_KEYS: the first signs, every one verifies, a dropped key ends its links", async () => {
    const old = await withGateway({ SVC_LINK_SIGNING_KEYS: K1 }, (gw) => approveLink(gw, acmeTask(1)))
    const fresh = await withGateway({ SVC_LINK_SIGNING_KEYS: `${K2}, ${K1}` }, async (gw) => {
      expect(await opens(gw, old)).toBe(200)
      return approveLink(gw, acmeTask(2))
    })
    await withGateway({ SVC_LINK_SIGNING_KEYS: K2 }, async (gw) => {
      expect(await opens(gw, old)).toBe(404)
      expect(await opens(gw, fresh)).toBe(200)
      expect(gw.output()).not.toContain(K2)
    })
  })

  it("a key shorter than 32 characters stops the start, naming the setting and not the value", async () => {
    const secret = "short-secret-value"
    const started = start({ SVC_LINK_SIGNING_KEYS: `${K1},${secret}` })
    const error = await started.then(
      async (gw) => {
        await gw.stop()
        return ""
      },
      (e: Error) => e.message
    )
    expect(error).toMatch(/Cannot start: SVC_LINK_SIGNING_KEYS \(not shown\): key 2 of 2 is not at least 32/)
    expect(error).not.toContain(secret)
    expect(error).not.toContain(K1)
  })
})
