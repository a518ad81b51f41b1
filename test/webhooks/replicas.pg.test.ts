/**
 * Two built gateway replicas on one PostgreSQL database deliver one outbox: every attempt is
 * made by one replica only (the receiver sees each webhook-id exactly as often as attempts were
 * logged: once to fail, once to succeed), and one task's events reach the subscription in order,
 * whichever replica wrote or sent them.
 */
import * as Pg from "pg"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testDatabase } from "../support/postgres.js"
import { connectClient, startReplicas, stopReplicas } from "../support/pgReplicas.js"
import { http, type RunningService } from "../support/process.js"
import { type Receiver, startReceiver, until } from "./receiver.js"

const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const TOKEN = "webhook-replicas-admin-token-0123456789"
const TASKS = 12

let db: string
let pg: Pg.Client
let receiver: Receiver
const replicas: Array<RunningService> = []

beforeAll(async () => {
  db = await testDatabase("webhooks", { empty: true })
  receiver = await startReceiver()
  replicas.push(...await startReplicas(db, 2, {
    SVC_ADMIN_TOKEN: TOKEN,
    SVC_DB_POOL_SIZE: "6",
    SVC_WEBHOOK_URL_ALLOW: `127.0.0.1:${receiver.port}`,
    SVC_WEBHOOK_RETRY_SCHEDULE: "0,200ms,200ms"
  }))
  pg = await connectClient(db)
}, 120_000)

afterAll(async () => {
  await stopReplicas(replicas, pg)
  await receiver?.close()
})

describe("two replicas", () => {
  it("make each attempt once, and keep one task's events in order", async () => {
    // Every message fails its first attempt and succeeds on the second: two attempts each.
    const seen = new Map<string, number>()
    receiver.answer("/replicas", () => ({ status: 200, delayMs: 30 }))
    const created = await http("POST", `${replicas[0]!.adminUrl}/workspace/webhooks`, {
      tenant: "acme",
      url: receiver.url("/replicas"),
      events: ["task.created", "file.stored", "source.submitted", "step.completed"]
    }, { authorization: `Bearer ${TOKEN}` })
    expect(created.status, created.text).toBe(201)
    const secret: string = created.body.secret
    receiver.answer("/replicas", (n) => {
      const r = receiver.received("/replicas")[n]!
      const id = String(r.headers["webhook-id"])
      const count = (seen.get(id) ?? 0) + 1
      seen.set(id, count)
      return { status: count === 1 ? 500 : 200, delayMs: 30 }
    })

    const taskIds = await Promise.all(Array.from({ length: TASKS }, async (_, i) => {
      const via = replicas[i % 2]!
      const task = await http("POST", `${via.url}/v1/entities/${ACME_US}/tasks`, {
        workflowId: "expense-review",
        context: { period: "2026-11" }
      })
      expect(task.status, task.text).toBe(201)
      const other = replicas[(i + 1) % 2]!
      const ingest = await http("POST", `${other.url}/v1/tasks/${task.body.id}/files/ingest`, {
        source: "receipts",
        fileName: `r${i}.pdf`,
        fileRef: { provider: "inline_base64", data: Buffer.from(`receipt ${i}`).toString("base64") },
        signalTaskId: task.body.id,
        signalName: "file_submitted"
      })
      expect(ingest.status, ingest.text).toBeLessThan(300)
      return task.body.id as string
    }))

    // task.created, file.stored, source.submitted, step.completed per task; each sent twice.
    const expected = TASKS * 4
    await until("every message delivered", async () => {
      const { rows } = await pg.query(`SELECT COUNT(*)::int AS n FROM webhook_messages WHERE state = 'delivered'`)
      return rows[0].n >= expected ? true : undefined
    }, 60_000)
    const { rows: attempts } = await pg.query(
      `SELECT m.webhook_id, COUNT(a.id)::int AS n FROM webhook_messages m JOIN webhook_attempts a ON a.message_id = m.id
       GROUP BY m.webhook_id`
    )
    expect(attempts).toHaveLength(expected)
    const received = receiver.received("/replicas")
    const byId = new Map<string, number>()
    for (const r of received) byId.set(String(r.headers["webhook-id"]), (byId.get(String(r.headers["webhook-id"])) ?? 0) + 1)
    // Exactly the attempts logged, no more: no attempt was made by both replicas.
    for (const a of attempts) expect(byId.get(a.webhook_id), a.webhook_id).toBe(2)
    expect(received).toHaveLength(expected * 2)

    // Per task, the successful deliveries arrive in the timeline's order.
    const wh = new Webhook(secret)
    const delivered = received.filter((r, i) => received.findIndex((x) => x.headers["webhook-id"] === r.headers["webhook-id"]) !== i)
    for (const taskId of taskIds) {
      const types = delivered
        .map((r) => wh.verify(r.body, r.headers as Record<string, string>) as { type: string; data: { taskId: string } })
        .filter((e) => e.data.taskId === taskId)
        .map((e) => e.type)
      expect(types, taskId).toEqual(["task.created", "file.stored", "source.submitted", "step.completed"])
    }
  }, 120_000)

  it("deliver concurrent writes to one task in the timeline's order", async () => {
    // Before: the chain followed the order writers took its lock, the timeline the order their
    // transactions began; 40 uploads at once to one task differed in 5 of 5 rounds.
    receiver.answer("/order", () => ({ status: 200 }))
    const created = await http("POST", `${replicas[0]!.adminUrl}/workspace/webhooks`, {
      tenant: "acme",
      url: receiver.url("/order"),
      events: ["file.stored"]
    }, { authorization: `Bearer ${TOKEN}` })
    expect(created.status, created.text).toBe(201)
    for (let round = 0; round < 3; round++) {
      const task = await http("POST", `${replicas[0]!.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } })
      expect(task.status, task.text).toBe(201)
      const taskId: string = task.body.id
      const uploads = await Promise.all(Array.from({ length: 40 }, (_, i) =>
        http("POST", `${replicas[i % 2]!.url}/v1/tasks/${taskId}/files`, {
          source: "receipts",
          fileName: `ρ${i}.pdf`,
          data: Buffer.from(`file ${i}`).toString("base64")
        })
      ))
      for (const u of uploads) expect(u.status, u.text).toBe(201)
      const ofTask = (r: { body: string }) => (JSON.parse(r.body) as { data: { taskId: string } }).data.taskId === taskId
      const got = await receiver.waitFor("/order", 40, 30_000, ofTask)
      const delivered = got.map((r) => (JSON.parse(r.body) as { data: { documentId: string } }).data.documentId)
      const timeline = (await http("GET", `${replicas[1]!.url}/v1/tasks/${taskId}/events?limit=1000`)).body.events as Array<{ type: string; payload: { documentId: string } }>
      const stored = timeline.filter((e) => e.type === "file.stored").map((e) => e.payload.documentId)
      expect(stored).toHaveLength(40)
      expect(delivered, `round ${round}`).toEqual(stored)
    }
  }, 120_000)

  it("hold the tenant's 50 subscriptions when both create at once", async () => {
    const admin = { authorization: `Bearer ${TOKEN}` }
    const { rows: [before] } = await pg.query(`SELECT COUNT(*)::int AS n FROM webhook_subscriptions`)
    // Before: count and insert were apart, and 120 at once left 88-108.
    const answers = await Promise.all(Array.from({ length: 120 }, (_, i) =>
      http("POST", `${replicas[i % 2]!.adminUrl}/workspace/webhooks`, { tenant: "acme", url: receiver.url(`/cap${i}`), events: ["task.created"] }, admin)
    ))
    const made = answers.filter((a) => a.status === 201)
    expect(made).toHaveLength(50 - before.n)
    for (const a of answers.filter((a) => a.status !== 201)) {
      expect([a.status, a.body.message], a.text).toEqual([400, expect.stringMatching(/already has 50 webhook subscriptions/)])
    }
    const { rows: [after] } = await pg.query(`SELECT COUNT(*)::int AS n FROM webhook_subscriptions`)
    expect(after.n).toBe(50)
    for (const a of made) {
      expect((await http("DELETE", `${replicas[0]!.adminUrl}/workspace/webhooks/${a.body.id}?tenant=acme`, undefined, admin)).status).toBeLessThan(300)
    }
  }, 60_000)
})
