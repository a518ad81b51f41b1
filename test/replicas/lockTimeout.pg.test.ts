/**
 * A write waiting for a lock another transaction holds on PostgreSQL (a replica frozen mid-write
 * holds its task's row) waits as long as SQLite waits for its file, SVC_DB_BUSY_TIMEOUT_MS, then
 * answers 503 with Retry-After, nothing written. Before: every write to that task waited for the
 * statement timeout (30 s by default), past the request's deadline of 15 s.
 */
import type * as Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testDatabase } from "../support/postgres.js"
import { connectClient, startReplicas, stopReplicas } from "../support/pgReplicas.js"
import { http, type RunningService } from "../support/process.js"
import { EXPENSE_TASK, ROW_NEEDS_ATTENTION } from "../support/world.js"

let replicas: Array<RunningService> = []
let pg: Pg.Client | undefined

beforeAll(async () => {
  const db = await testDatabase("locktimeout", { empty: true })
  replicas = await startReplicas(db, 1, { SVC_DB_BUSY_TIMEOUT_MS: "1000", SVC_DB_STATEMENT_TIMEOUT_MS: "20000", SVC_DB_POOL_SIZE: "4" })
  pg = await connectClient(db)
}, 120_000)

afterAll(async () => {
  await stopReplicas(replicas, pg)
})

describe("a write behind another transaction's lock on its task (PostgreSQL)", () => {
  it("answers 503 with Retry-After after the busy bound, writes nothing, and goes through once the lock is gone", async () => {
    const url = replicas[0]!.url
    const cell = async () =>
      ((await http("GET", `${url}/v1/tasks/${EXPENSE_TASK}/ui`)).body.step.args.rows as Array<{ id: string; fields: Record<string, unknown> }>)
        .find((r) => r.id === ROW_NEEDS_ATTENTION)!.fields.merchant
    const before = await cell()
    await pg!.query("BEGIN")
    await pg!.query("SELECT id FROM tasks WHERE id = $1 FOR UPDATE", [EXPENSE_TASK])
    try {
      const writes = [
        () => http("PATCH", `${url}/v1/subledgers/expenses/${ROW_NEEDS_ATTENTION}`, { field: "merchant", value: "Behind the lock" }),
        () => http("POST", `${url}/v1/tasks/${EXPENSE_TASK}/row-action`, { ledger: "expenses", action: "edit_cell", rowId: ROW_NEEDS_ATTENTION, field: "merchant", value: "Behind the lock" })
      ]
      for (const write of writes) {
        const started = performance.now()
        const res = await write()
        const ms = performance.now() - started
        expect([res.status, res.headers.get("retry-after")], res.text).toEqual([503, "1"])
        // The busy bound (1 s) and its retries, not the statement timeout (20 s).
        expect(ms).toBeLessThan(6_000)
        expect(ms).toBeGreaterThan(900)
      }
    } finally {
      await pg!.query("ROLLBACK")
    }
    expect(await cell()).toBe(before)
    const res = await http("PATCH", `${url}/v1/subledgers/expenses/${ROW_NEEDS_ATTENTION}`, { field: "merchant", value: "After the lock" })
    expect(res.status, res.text).toBe(200)
    expect(await cell()).toBe("After the lock")
  }, 60_000)
})
