/**
 * PostgreSQL: a reader waits only for this store's own writers. A transaction of another
 * application holding a transaction id open, in the same database or another one on the server,
 * hides nothing: a producer's acknowledged event is read at once, by GET and by a follower.
 */
import { afterAll, expect, it } from "vitest"
import { fileURLToPath } from "node:url"
import * as Pg from "pg"
import { testDatabase } from "../support/postgres.js"
import { http, type RunningService, startBuilt } from "../support/process.js"
import { ACME_US } from "../support/world.js"

const FIXTURE = fileURLToPath(new URL("../fixtures/example.json", import.meta.url))
let gw: RunningService | undefined
afterAll(async () => {
  await gw?.stop()
})

it("an open write transaction of another application hides no event from readers", async () => {
  const db = await testDatabase("foreign_tx")
  const other = await testDatabase("foreign_tx_other")
  gw = await startBuilt({ SVC_DATABASE_URL: db, SVC_SEED_FILE: FIXTURE, SVC_TENANT_SLUG: "acme", SVC_ADMIN_PORT: "off" })
  const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } })
  expect(created.status).toBe(201)
  const taskId = created.body.id as string
  const positions = async (query = "") =>
    ((await http("GET", `${gw!.url}/v1/tasks/${taskId}/events${query}`)).body.events as Array<{ position: string }>).map((e) => e.position)
  const [first] = await positions()
  let seq = 1
  for (const url of [db, other]) {
    const holder = new Pg.Client({ connectionString: url })
    await holder.connect()
    try {
      await holder.query("BEGIN")
      await holder.query("CREATE TEMP TABLE held (x int)")
      await holder.query("INSERT INTO held VALUES (1)")
      await holder.query("SELECT pg_current_xact_id()::text")
      const posted = await http("POST", `${gw.url}/v1/tasks/${taskId}/events`, { type: "note", source: "worker", seq: seq++, payload: {} })
      expect(posted.status).toBe(200)
      const position = posted.body.event.position as string
      expect(await positions()).toContain(position)
      expect(await positions(`?after=${first}`)).toContain(position)
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined)
      await holder.end()
    }
  }
}, 60_000)
