/**
 * An Idempotency-Key is its caller's, and a caller the edge names no one (SVC_ACTOR_REQUIRED=false)
 * is a caller of its own: a key first used with no actor header and then sent by a named person,
 * same body, is a 409 for them, not the anonymous caller's stored result (and the other way
 * round). Only a key stored before keys carried their caller (its fingerprint bare) still matches
 * whoever repeats the request, for the 24 hours it is kept. On the built process.
 */
import { createClient } from "@libsql/client"
import { fileURLToPath, pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { type BuiltGateway, startBuiltGateway } from "../timeline/support.js"

const FIXTURE = fileURLToPath(new URL("../fixtures/inbox.json", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const HEADER = "x-forwarded-email"

let gw: BuiltGateway

beforeAll(async () => {
  gw = await startBuiltGateway({ SVC_SEED_FILE: FIXTURE, SVC_ACTOR_HEADER: HEADER, SVC_ACTOR_REQUIRED: "false" })
}, 60_000)
afterAll(async () => {
  await gw?.cleanup()
})

const create = (key: string, actor?: string) =>
  http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "close" }, {
    "idempotency-key": key,
    ...(actor !== undefined ? { [HEADER]: actor } : {})
  })

describe("an Idempotency-Key first used anonymously", () => {
  it("is a 409 for a named caller with the same body, and replays to the anonymous caller", async () => {
    const first = await create("anon-then-named")
    expect(first.status).toBe(201)
    const named = await create("anon-then-named", "ann@acme.test")
    // Before: 201 with the anonymous caller's task.
    expect(named.status).toBe(409)
    expect(named.body).toMatchObject({ statusCode: 409, error: "Conflict" })
    expect(named.body.message).toContain("Idempotency-Key")
    const again = await create("anon-then-named")
    expect(again.status).toBe(201)
    expect(again.body.id).toBe(first.body.id)
  })

  it("a key first used by a named caller is a 409 for an anonymous one, and replays to its caller", async () => {
    const first = await create("named-then-anon", "ann@acme.test")
    expect(first.status).toBe(201)
    expect((await create("named-then-anon")).status).toBe(409)
    const again = await create("named-then-anon", "ANN@acme.test")
    expect(again.body.id).toBe(first.body.id)
  })

  it("a key stored before keys carried their caller (a bare fingerprint) still replays to whoever repeats it", async () => {
    const first = await create("anon-reference")
    expect(first.status).toBe(201)
    // Such a row as the earlier code stored it: this request's fingerprint with no caller mark.
    const db = createClient({ url: pathToFileURL(gw.dbFile).href })
    try {
      const row = (await db.execute("SELECT tenant_id, fingerprint, result, created_ms FROM idempotency_keys WHERE key = 'anon-reference'")).rows[0]!
      const bare = String(row.fingerprint).split(" ")[0]!
      expect(bare).toMatch(/^[0-9a-f]{64}$/)
      expect(String(row.fingerprint)).not.toBe(bare)
      for (const key of ["old-key-named", "old-key-anon"]) {
        await db.execute({
          sql: "INSERT INTO idempotency_keys (tenant_id, key, fingerprint, result, created_ms) VALUES (?, ?, ?, ?, ?)",
          args: [row.tenant_id!, key, bare, row.result!, row.created_ms!]
        })
      }
    } finally {
      db.close()
    }
    const named = await create("old-key-named", "ann@acme.test")
    expect(named.status).toBe(201)
    expect(named.body.id).toBe(first.body.id)
    const anonymous = await create("old-key-anon")
    expect(anonymous.status).toBe(201)
    expect(anonymous.body.id).toBe(first.body.id)
  })
})
