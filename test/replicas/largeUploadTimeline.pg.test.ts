/**
 * A large upload does not hold back other tasks' timelines (PostgreSQL). A reader takes only events
 * of transactions older than every store writer still running (src/workspace/embedded/timeline.ts
 * `settledEvents`), so a writer transaction that inserts 32 MiB of chunks (about 1.3 s here) held
 * every event written after it began, on every task and replica, until it committed: a producer's
 * event reached readers 1.8-1.9 s after its 200. The bytes are now stored before the writer
 * transaction; the transaction that records the document holds only its row and its audit event.
 * Bytes that no committed document names (a refusal, an idempotent replay) are removed.
 */
import type * as Pg from "pg"
import { randomBytes, createHash } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testDatabase } from "../support/postgres.js"
import { connectClient, startReplicas, stopReplicas } from "../support/pgReplicas.js"
import { http, type RunningService } from "../support/process.js"
import { EXPENSE_TASK, LEGACY_TASK, MISSING } from "../support/world.js"

let replicas: Array<RunningService> = []
let pg: Pg.Client | undefined
let db = ""

beforeAll(async () => {
  db = await testDatabase("largeupload", { empty: true })
  replicas = await startReplicas(db, 2, { SVC_DB_POOL_SIZE: "6" })
  pg = await connectClient(db)
}, 120_000)

afterAll(async () => {
  await stopReplicas(replicas, pg)
})

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")

const rawUpload = (base: string, taskId: string, bytes: Uint8Array, headers: Record<string, string> = {}) =>
  fetch(`${base}/v1/tasks/${taskId}/files/raw?${new URLSearchParams({ source: "statements", fileName: "big.pdf" })}`, {
    method: "POST",
    headers: { "x-svc-upload": "raw", "content-type": "application/pdf", ...headers },
    body: bytes
  }).then(async (res) => ({ status: res.status, body: await res.json() as { id: string; downloadUrl: string } }))

/** Chunks of bytes that no document names (what a staged upload left). */
const orphanChunks = async () =>
  Number((await pg!.query(
    "SELECT count(*) AS n FROM document_chunks c WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.id = c.document_id)"
  )).rows[0].n)

/** Resolves once a backend of the database is inserting document chunks. */
const chunksBeingInserted = async () => {
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const { rows } = await pg!.query(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'INSERT INTO document_chunks%' AND pid <> pg_backend_pid() AND state <> 'idle'"
    )
    if (Number(rows[0].n) > 0) return
    await new Promise((r) => setTimeout(r, 5))
  }
  throw new Error("no chunk insert seen")
}

describe("a 32 MiB upload beside other tasks' timelines (PostgreSQL)", () => {
  it("another task's event is readable on both replicas while the upload's bytes are being written", async () => {
    const [a, b] = replicas as [RunningService, RunningService]
    const bytes = randomBytes(32 * 1024 * 1024 - 4096)
    for (let round = 0; round < 2; round++) {
      const upload = rawUpload(a.url, EXPENSE_TASK, bytes)
      await chunksBeingInserted()
      const seq = 5_000 + round
      const posted = await http("POST", `${b.url}/v1/tasks/${LEGACY_TASK}/events`, {
        type: "note.added", source: "worker", seq, payload: { text: `während des Uploads ${round}` }
      })
      expect(posted.status, posted.text).toBe(200)
      const acknowledged = performance.now()
      const seenAt = await Promise.all([a, b].map(async (via) => {
        for (;;) {
          const page = await http("GET", `${via.url}/v1/tasks/${LEGACY_TASK}/events?limit=1000`)
          const events = page.body.events as Array<{ seq: number; source: string }>
          if (events.some((e) => e.source === "worker" && e.seq === seq)) return performance.now() - acknowledged
          await new Promise((r) => setTimeout(r, 10))
        }
      }))
      const stored = await upload
      expect(stored.status, JSON.stringify(stored.body)).toBe(201)
      // Before: 900-1,900 ms, the rest of the upload's transaction.
      for (const ms of seenAt) expect(ms).toBeLessThan(400)
      const got = Buffer.from(await (await fetch(`${b.url}${stored.body.downloadUrl}`)).arrayBuffer())
      expect([got.length, sha(got)]).toEqual([bytes.length, sha(bytes)])
    }
    expect(await orphanChunks()).toBe(0)
  }, 90_000)

  it("bytes of an upload that stores nothing are removed: an idempotent replay, an unknown task", async () => {
    const [a, b] = replicas as [RunningService, RunningService]
    const bytes = randomBytes(3 * 1024 * 1024 + 7)
    const key = { "idempotency-key": `large-${Date.now()}` }
    const first = await rawUpload(a.url, EXPENSE_TASK, bytes, key)
    expect(first.status, JSON.stringify(first.body)).toBe(201)
    const replay = await rawUpload(b.url, EXPENSE_TASK, bytes, key)
    expect(replay.status, JSON.stringify(replay.body)).toBe(201)
    expect(replay.body.id).toBe(first.body.id)
    const unknown = await rawUpload(a.url, MISSING, bytes)
    expect(unknown.status).toBe(404)
    expect(await orphanChunks()).toBe(0)
    const got = Buffer.from(await (await fetch(`${a.url}${replay.body.downloadUrl}`)).arrayBuffer())
    expect(sha(got)).toBe(sha(bytes))
  }, 60_000)

  it("at start, chunks staged over an hour ago and never recorded are removed; younger ones stay", async () => {
    const stage = async (id: string, ageMs: number) => {
      await pg!.query("INSERT INTO staged_documents (id, staged_ms) VALUES ($1, $2)", [id, Date.now() - ageMs])
      for (let idx = 0; idx < 3; idx++) {
        await pg!.query("INSERT INTO document_chunks (document_id, idx, data) VALUES ($1, $2, $3)", [id, idx, randomBytes(1000)])
      }
    }
    const chunksOf = async (id: string) =>
      Number((await pg!.query("SELECT count(*) AS n FROM document_chunks WHERE document_id = $1", [id])).rows[0].n)
    const crashed = "6d1f3a52-0b7e-4c55-9d0e-0b3c3f1e7a01"
    const inFlight = "6d1f3a52-0b7e-4c55-9d0e-0b3c3f1e7a02"
    await stage(crashed, 2 * 60 * 60_000)
    await stage(inFlight, 60_000)
    const [third] = await startReplicas(db, 1, { SVC_DB_POOL_SIZE: "2" })
    try {
      const deadline = Date.now() + 10_000
      while ((await chunksOf(crashed)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
      expect(await chunksOf(crashed)).toBe(0)
      expect((await pg!.query("SELECT id FROM staged_documents ORDER BY id")).rows).toEqual([{ id: inFlight }])
      expect(await chunksOf(inFlight)).toBe(3)
    } finally {
      await stopReplicas([third!])
    }
  }, 60_000)
})
