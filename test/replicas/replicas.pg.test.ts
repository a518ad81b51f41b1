/**
 * Three gateway replicas (real processes) on one PostgreSQL database, under concurrent load:
 * every rule that keeps them correct lives in the database, so racing requests sent to
 * different replicas must behave as if one process had served them, and a replica killed with
 * SIGKILL mid-load loses nothing it acknowledged. No answer may be a 5xx.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Pg from "pg"
import { testDatabase } from "../support/postgres.js"
import { connectClient, startReplicas, stopReplicas } from "../support/pgReplicas.js"
import { http, type JsonResponse, type RunningService } from "../support/process.js"

const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
/** A short lease: the survivors take a killed replica's claims over within the test. */
const LEASE_MS = 1500

let db: string
let pg: Pg.Client
const replicas: Array<RunningService> = []
/** Every status any replica answered, for the no-5xx check. */
const statuses: Array<{ readonly what: string; readonly status: number }> = []

const call = async (what: string, method: string, url: string, body?: unknown) => {
  const res = await http(method, url, body)
  statuses.push({ what, status: res.status })
  return res
}

beforeAll(async () => {
  // Empty: the three replicas race to migrate it.
  db = await testDatabase("replicas", { empty: true })
  // All three at once: migrations and seeding race too.
  replicas.push(...await startReplicas(db, 3, { SVC_SIGNAL_LEASE_MS: String(LEASE_MS), SVC_DB_POOL_SIZE: "6" }))
  pg = await connectClient(db)
}, 120_000)

afterAll(() => stopReplicas(replicas, pg))

const newExpenseTask = async (via: RunningService) => {
  const created = await call("create task", "POST", `${via.url}/v1/entities/${ACME_US}/tasks`, {
    workflowId: "expense-review",
    context: { period: "2026-11" }
  })
  expect(created.status).toBe(201)
  const taskId: string = created.body.id
  const upload = await call("upload", "POST", `${via.url}/v1/tasks/${taskId}/files/ingest`, {
    source: "receipts",
    fileName: "r.pdf",
    fileRef: { provider: "inline_base64", data: Buffer.from("Coffee 4.50").toString("base64") },
    signalTaskId: taskId,
    signalName: "file_submitted"
  })
  expect(upload.status).toBe(201)
  return taskId
}

const ok = (r: JsonResponse) => r.status >= 200 && r.status < 300

describe("three replicas on one PostgreSQL", { timeout: 120_000 }, () => {
  it("racing decisions on one step at three replicas: one wins, the others are duplicates or 409", async () => {
    const [a, b, c] = replicas as [RunningService, RunningService, RunningService]
    for (let round = 0; round < 6; round++) {
      const taskId = await newExpenseTask(replicas[round % 3]!)
      const ui = await call("ui", "GET", `${b.url}/v1/tasks/${taskId}/ui`)
      expect(ui.body.step.id).toBe("review_expenses")
      const decide = (via: RunningService, type: "approved" | "rejected") =>
        call("decide", "POST", `${via.url}/v1/tasks/${taskId}/action`, { type, step: "review_expenses" })
      const answers = await Promise.all([decide(a, "approved"), decide(b, "rejected"), decide(c, "approved")])
      const winners = answers.filter(ok)
      for (const r of answers) expect([200, 409]).toContain(r.status)
      // Accepted decisions all agree (an identical one is a duplicate); a different one is a 409.
      const accepted = new Set(answers.map((r, i) => (ok(r) ? (i === 1 ? "rejected" : "approved") : undefined)).filter(Boolean))
      expect(winners.length).toBeGreaterThan(0)
      expect(accepted.size).toBe(1)
      const won = [...accepted][0]
      const after = await call("ui", "GET", `${c.url}/v1/tasks/${taskId}/ui`)
      if (won === "approved") expect(after.body.step.id).toBe("sign_off")
      else expect(after.body.task.status).toBe("FAILED")
      const snapshots = await call("snapshots", "GET", `${a.url}/v1/tasks/${taskId}/snapshots`)
      expect(snapshots.body.review_expenses.decision).toBe(won)
    }
  })

  it("the same event seq posted at two replicas: one event; identical re-post idempotent, a different body 409", async () => {
    const [a, b] = replicas as [RunningService, RunningService]
    const taskId = await newExpenseTask(a)
    const event = (seq: number, text: string) => ({ type: "reasoning.delta", source: "worker", seq, payload: { text } })
    // The worker's own seqs (the engine's records take none of them).
    for (let seq = 1001; seq <= 1010; seq++) {
      const same = await Promise.all([a, b].map((via) => call("event", "POST", `${via.url}/v1/tasks/${taskId}/events`, event(seq, "same"))))
      for (const r of same) expect(ok(r)).toBe(true)
      const other = seq + 100
      const differing = await Promise.all(
        [a, b].map((via, i) => call("event", "POST", `${via.url}/v1/tasks/${taskId}/events`, event(other, `body ${i}`)))
      )
      expect(differing.filter(ok)).toHaveLength(1)
      expect(differing.filter((r) => r.status === 409)).toHaveLength(1)
    }
    const listed = await call("events", "GET", `${b.url}/v1/tasks/${taskId}/events`)
    // The worker's events only: the gateway's records read with seq = their position, which may fall in any range.
    const seqs: Array<number> = listed.body.events
      .filter((e: { source: string; origin: string }) => e.source === "worker" && e.origin === "producer")
      .map((e: { seq: number }) => e.seq)
    expect(seqs.filter((s) => s > 1000 && s <= 1010)).toEqual([1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010])
    expect(seqs.filter((s) => s > 1100)).toHaveLength(10)
  })

  it("bulk ingests while one replica is SIGKILLed: acknowledged batches whole, no partial batch, every signal delivered once", async () => {
    const taskId = await newExpenseTask(replicas[0]!)
    const ROWS = 300
    const BATCHES = 36
    const victim = replicas[2]!
    const acknowledged = new Set<number>()
    const failures: Array<string> = []
    let killed = false
    const post = async (batch: number) => {
      // Round-robin over the replicas still alive; a connection the victim's death cut is not acknowledged.
      const alive = killed ? replicas.slice(0, 2) : replicas
      const via = alive[batch % alive.length]!
      try {
        const res = await fetch(`${via.url}/v1/tasks/${taskId}/data/ingest`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            kind: "expense",
            signalTaskId: taskId,
            signalName: "data_loaded",
            events: Array.from({ length: ROWS }, (_, i) => ({ data: { batch, i, note: "x".repeat(30) } }))
          })
        })
        await res.arrayBuffer()
        statuses.push({ what: `ingest via ${via === victim ? "victim" : "survivor"}`, status: res.status })
        if (res.status === 201) acknowledged.add(batch)
        else failures.push(`batch ${batch}: ${res.status}`)
      } catch (error) {
        if (via !== victim) failures.push(`batch ${batch}: ${(error as Error).message}`)
      }
    }
    // Six writers; the victim dies once a third of the batches are in.
    let next = 0
    const writers = Array.from({ length: 6 }, async () => {
      while (next < BATCHES) {
        const batch = next++
        if (batch === Math.floor(BATCHES / 3) && !killed) {
          killed = true
          victim.kill("SIGKILL")
        }
        await post(batch)
      }
    })
    await Promise.all(writers)
    await victim.exited
    expect(failures).toEqual([])
    expect(acknowledged.size).toBeGreaterThan(BATCHES / 2)

    // Every acknowledged batch is there in full; no batch is there in part.
    const { rows: perBatch } = await pg.query<{ batch: string; n: string }>(
      `SELECT (data::json->>'batch') AS batch, COUNT(*) AS n FROM data_records WHERE task_id = $1 GROUP BY 1`,
      [taskId]
    )
    const counts = new Map(perBatch.map((r) => [Number(r.batch), Number(r.n)]))
    for (const batch of acknowledged) expect(counts.get(batch)).toBe(ROWS)
    for (const [batch, n] of counts) expect({ batch, n }).toEqual({ batch, n: ROWS })

    // Every recorded signal is delivered, including those the victim had claimed (its lease runs out).
    const deadline = Date.now() + 60_000
    let pending = -1
    for (;;) {
      const { rows } = await pg.query<{ n: string }>(`SELECT COUNT(*) AS n FROM signals WHERE delivered_at IS NULL`)
      pending = Number(rows[0]!.n)
      if (pending === 0 || Date.now() > deadline) break
      await new Promise((r) => setTimeout(r, 250))
    }
    expect(pending).toBe(0)
    // One signal per stored row, each applied in exactly one committed delivery.
    const { rows: [check] } = await pg.query<{ rows: string; signals: string; distinct_rows: string; retried: string }>(
      `SELECT
        (SELECT COUNT(*) FROM data_records WHERE task_id = $1) AS rows,
        (SELECT COUNT(*) FROM signals WHERE name = 'data_loaded' AND task_id = $1) AS signals,
        (SELECT COUNT(DISTINCT payload::json->>'rowId') FROM signals WHERE name = 'data_loaded' AND task_id = $1) AS distinct_rows,
        (SELECT COUNT(*) FROM signals WHERE task_id = $1 AND attempts <> 1) AS retried`,
      [taskId]
    )
    expect(Number(check!.signals)).toBe(Number(check!.rows))
    expect(Number(check!.distinct_rows)).toBe(Number(check!.rows))
    expect(Number(check!.retried)).toBe(0)
    const { rows: deliverers } = await pg.query<{ claimed_by: string; n: string }>(
      `SELECT claimed_by, COUNT(*) AS n FROM signals WHERE task_id = $1 GROUP BY 1`,
      [taskId]
    )
    console.log(`replicas: ${acknowledged.size}/${BATCHES} batches acknowledged; signals delivered by ${JSON.stringify(deliverers)}`)
  })

  it("no replica answered 5xx", () => {
    expect(statuses.length).toBeGreaterThan(50)
    expect(statuses.filter((s) => s.status >= 500)).toEqual([])
  })
})
