/**
 * One busy task on three PostgreSQL replicas (built processes) makes no 503: twelve 200-record
 * bulk ingests into ONE task, spread over the replicas (half with a signal per record), while a
 * six workers post their events (each its own source, spread over the replicas), a follower reads the timeline by position and two follow it live over
 * SSE (one on the replica that is SIGKILLed midway, resumed at a survivor with Last-Event-ID). The live replicas answer no 5xx (a request the dead one cut at the socket is
 * retried at another with the same Idempotency-Key); every acknowledged batch is stored whole,
 * with one data.ingested event of its own; every follower read every event once, in the final
 * order. Before the positions, each write read MAX(seq) under the task's lock to place its audit
 * event: 5-6 of 12 such ingests answered 503 once deadlock and serialization retries ran out.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { randomUUID } from "node:crypto"
import * as Pg from "pg"
import { testDatabase } from "../support/postgres.js"
import { connectClient, startReplicas, stopReplicas } from "../support/pgReplicas.js"
import { http, type RunningService } from "../support/process.js"
import { ACME_US } from "../support/world.js"
import { openSse, type SseConnection } from "../events/sse.js"
import { expectEachOnce, nearPowerOfTen, readTimeline, type TimelineEvent } from "./support.js"

const BATCHES = 12
const ROWS = 200

let db: string
let pg: Pg.Client
const replicas: Array<RunningService> = []

beforeAll(async () => {
  db = await testDatabase("timeline_ingest")
  replicas.push(...await startReplicas(db, 3, { SVC_ADMIN_PORT: "off", SVC_DB_POOL_SIZE: "6", SVC_SIGNAL_LEASE_MS: "1500" }))
  pg = await connectClient(db)
}, 90_000)

afterAll(() => stopReplicas(replicas, pg))

describe("one task, three PostgreSQL replicas, a SIGKILL", () => {
  it("twelve 200-record ingests: no 5xx, every acknowledged batch whole with its data.ingested event, a follower reads each event once", async () => {
    const started = Date.now()
    const [first, , victim] = replicas as [RunningService, RunningService, RunningService]
    const created = await http("POST", `${first.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } })
    expect(created.status).toBe(201)
    const taskId: string = created.body.id
    const upload = await http("POST", `${first.url}/v1/tasks/${taskId}/files/ingest`, {
      source: "receipts",
      fileName: "r.pdf",
      fileRef: { provider: "inline_base64", data: Buffer.from("Coffee 4.50").toString("base64") },
      signalTaskId: taskId,
      signalName: "file_submitted"
    })
    expect(upload.status).toBe(201)
    // The writes below cross a power of ten of transaction ids (positions are `<transaction id>-<n>`).
    await nearPowerOfTen(db, 25)

    // Live followers from the start: one at a survivor, one at the replica that will die.
    const stream = (via: RunningService, headers: Record<string, string> = {}) => openSse(`${via.url}/v1/tasks/${taskId}/events/stream`, headers)
    const streams: Array<SseConnection> = []
    const steady = await stream(replicas[1]!)
    const doomed = await stream(victim)
    streams.push(steady, doomed)

    let killed = false
    const live = () => (killed ? replicas.filter((r) => r !== victim) : replicas)
    /** Every answer of a live replica; socket failures of the victim (retried elsewhere). */
    const answers: Array<{ readonly what: string; readonly status: number }> = []
    const cut: Array<string> = []

    /** A write at `start`'s replica; if that one is the victim and the socket fails, again at a survivor. */
    const send = async (what: string, start: number, path: string, body: unknown) => {
      const key = randomUUID()
      for (let attempt = 0;; attempt++) {
        const alive = live()
        const via = alive[(start + attempt) % alive.length]!
        try {
          const res = await fetch(`${via.url}${path}`, {
            method: "POST",
            headers: { "content-type": "application/json", "idempotency-key": key },
            body: JSON.stringify(body)
          })
          const text = await res.text()
          answers.push({ what: `${what} via ${replicas.indexOf(via)}: ${res.status >= 500 ? text : ""}`, status: res.status })
          return { status: res.status, body: text === "" ? undefined : JSON.parse(text) }
        } catch (error) {
          if (via !== victim || attempt > 3) throw error
          cut.push(`${what}: ${(error as Error).message}`)
        }
      }
    }

    // The background work's failures, caught as they happen and thrown once all of it has stopped.
    const failures: Array<unknown> = []
    const background = (work: Promise<void>) => work.catch((error) => void failures.push(error))

    const acknowledged = new Map<number, ReadonlyArray<string>>()
    let next = 0
    const ingesters = Array.from({ length: 4 }, () => background((async () => {
      while (next < BATCHES) {
        const batch = next++
        // Midway, while batch 5 is on its way to it: the victim dies with whatever it has in flight.
        if (batch === 5) {
          setTimeout(() => {
            killed = true
            victim.kill("SIGKILL")
          }, 40)
        }
        const res = await send(`batch ${batch}`, batch, `/v1/tasks/${taskId}/data/ingest`, {
          kind: "expense",
          ...(batch % 2 === 0 ? { signalTaskId: taskId, signalName: "data_loaded" } : {}),
          events: Array.from({ length: ROWS }, (_, i) => ({ data: { batch, i, merchant: `Crêperie ${i} 東京`, amount: i + 0.5 } }))
        })
        if (res.status === 201) acknowledged.set(batch, (res.body as Array<{ id: string }>).map((r) => r.id))
      }
    })()))

    // Six workers' events on the same task meanwhile, each its own source, in its seq order.
    let writing = true
    const WORKERS = 6
    const workers = Array.from({ length: WORKERS }, (_, w) => background((async () => {
      for (let seq = 1; writing || seq <= 10; seq++) {
        const res = await send(`worker ${w} seq ${seq}`, w + seq, `/v1/tasks/${taskId}/events`, { type: "note", source: `worker-${w}`, seq, payload: { w, seq } })
        expect(res.status).toBe(200)
      }
    })()))

    // A follower by position, at the survivors in turn, while all that is written.
    const followed: Array<TimelineEvent> = []
    let cursor: string | undefined
    const readOn = async (via: RunningService) => {
      const { events } = await readTimeline(via.url, taskId, 500, cursor)
      followed.push(...events)
      if (events.length > 0) cursor = events[events.length - 1]!.position
    }
    const follower = background((async () => {
      for (let i = 0; writing; i++) {
        await readOn(replicas[i % 2]!)
        await new Promise((r) => setTimeout(r, 30))
      }
    })())

    // However the ingests end, the workers and the follower stop (and are awaited) before any check.
    await Promise.all(ingesters)
    writing = false
    await Promise.all([...workers, follower])
    if (failures.length > 0) throw failures[0]
    await victim.exited

    expect(answers.filter((a) => a.status >= 500)).toEqual([])
    expect(answers.filter((a) => a.status >= 300)).toEqual([])
    expect(acknowledged.size).toBe(BATCHES)
    console.log(`${BATCHES} ingests of ${ROWS} acknowledged; ${cut.length} cut by the SIGKILL and sent again; ${Date.now() - started} ms`)

    // Every acknowledged batch whole: its ids all stored, nothing more of it.
    const { rows } = await pg.query<{ id: string; batch: number }>(
      `SELECT id, (data::json->>'batch')::int AS batch FROM data_records WHERE task_id = $1`,
      [taskId]
    )
    for (const [batch, ids] of acknowledged) {
      expect(ids).toHaveLength(ROWS)
      const stored = rows.filter((r) => r.batch === batch).map((r) => r.id)
      expect(stored.sort()).toEqual([...ids].sort())
    }
    expect(rows).toHaveLength(BATCHES * ROWS)

    // The timeline, read whole once writes are done: one data.ingested per batch, each worker's in seq order.
    const { events } = await readTimeline(replicas[1]!.url, taskId, 200)
    expectEachOnce(events)
    const ingested = events.filter((e) => e.type === "data.ingested")
    expect(ingested.every((e) => e.origin === "gateway")).toBe(true)
    expect(ingested).toHaveLength(BATCHES)
    const batchOf = new Map([...acknowledged].map(([batch, ids]) => [ids[0]!, batch]))
    expect(new Set(ingested.map((e) => batchOf.get((e.payload.recordIds as Array<string>)[0]!)))).toEqual(new Set(acknowledged.keys()))
    for (const e of ingested) expect(e.payload.count).toBe(ROWS)
    for (let w = 0; w < WORKERS; w++) {
      const seqs = events.filter((e) => e.source === `worker-${w}`).map((e) => e.seq)
      expect(seqs.length).toBeGreaterThanOrEqual(10)
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1))
    }

    // The follower, caught up: the same events, once each, in the same order.
    await readOn(replicas[0]!)
    expectEachOnce(followed)
    expect(followed.map((e) => e.position)).toEqual(events.map((e) => e.position))

    // The live followers: the steady stream sent them all, once each, in order; the one cut by
    // the SIGKILL, resumed at a survivor from the last id it had, too.
    const ids = async (sse: SseConnection, n: number) => {
      const got: Array<string> = []
      while (got.length < n) got.push((await sse.nextEvent(10_000)).id!)
      return got
    }
    try {
      expect(await ids(steady, events.length)).toEqual(events.map((e) => e.position))
      const before: Array<string> = []
      for (;;) {
        try {
          before.push((await doomed.nextEvent(10_000)).id!)
        } catch {
          break
        }
      }
      const resumed = await stream(replicas[0]!, before.length > 0 ? { "last-event-id": before[before.length - 1]! } : {})
      streams.push(resumed)
      expect([...before, ...await ids(resumed, events.length - before.length)]).toEqual(events.map((e) => e.position))
      console.log(`the stream cut by the SIGKILL had ${before.length} of ${events.length} events; resumed at a survivor for the rest`)
    } finally {
      for (const sse of streams) sse.close()
    }
    expect(Date.now() - started).toBeLessThan(60_000)

    // Cursors at the extremes of a PostgreSQL position: read (a plain number comes before every
    // transaction), or a 400 naming after (a number past 2^53; a transaction not yet begun, past
    // every position given out), never a 5xx.
    for (const after of ["0", "9007199254740991", "0-0", events[0]!.position.replace(/-.*/, "-0")]) {
      const res = await http("GET", `${replicas[0]!.url}/v1/tasks/${taskId}/events?after=${after}&limit=3`)
      expect(res.status, `after=${after}: ${res.text}`).toBe(200)
    }
    for (const after of ["9999999999999999", "9999999999999999999-9999999999999999", "9999999999999999999-9007199254740991"]) {
      const res = await http("GET", `${replicas[0]!.url}/v1/tasks/${taskId}/events?after=${after}&limit=3`)
      expect(res.status, `after=${after}: ${res.text}`).toBe(400)
      expect(res.body.message).toMatch(/^after: /)
    }
  }, 120_000)
})
