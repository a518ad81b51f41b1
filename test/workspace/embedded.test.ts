/**
 * The embedded store's own guarantees, beyond the shared WorkspaceClient contract: atomic
 * batches with their outbox rows, delivery and retry, chunked documents, seeding, tenant
 * scoping, persistence across restarts and the agent registry. Each test gets its own
 * database file.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as SqlClient from "effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Stream from "effect/Stream"
import { createHash, randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { execFile } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { readFixture } from "../../src/domain/fixture.js"
import {
  EmbeddedWorkspace,
  type EmbeddedLayerOptions,
  makeEmbeddedLayer,
  makeEmbeddedLayerWithSql,
  sqlLayer
} from "../../src/workspace/embedded/layer.js"
import { DEMO_FIXTURE, loadFixture } from "../../src/workspace/embedded/seed.js"
import { CHUNK_BYTES } from "../../src/workspace/embedded/db.js"
import { NODE } from "../support/process.js"

// Ids from fixtures/demo.json.
const ACME = "ded92d4b-f408-46e5-8cce-284491efe71d"
const GLOBEX = "092cb321-0fda-45f1-9acc-c3d163fb36c4"
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const GLOBEX_US = "40b0f59f-adbf-4d1b-ba2a-434dde6e06ec"
/** expense-review at review_expenses (TABLE_REVIEW), then sign_off (APPROVAL). */
const TASK_REVIEW = "694ebd37-72d4-4ae6-b944-eb027435cd70"
/** expense-review at upload_receipts (FILE_UPLOAD). */
const TASK_UPLOAD = "1f3a5c7e-9b2d-4f60-8a1c-3e5b7d9f1a20"
/** expense-review at sign_off, the last step. */
const TASK_SIGN_OFF = "4c6e8a02-3d5f-4b7c-9e1a-2f4b6d8f0c53"
const TASK_GLOBEX = "5d7f9b13-4e6a-4c8d-8f2b-3a5c7e9b1d64"
const ROW_NEEDS = "7a9c1e35-6b8d-4f0a-8c2e-5d7f9b1d3f86"
const ROW_NEEDS_2 = "8b0d2f46-7c9e-4a1b-9d3f-6e8a0c2e4a97"
const ROW_REJECTED = "eff2b18c-a2fe-42cb-8fdb-bf71a794b101"
const ROW_GLOBEX = "40f46d23-e24b-4c5e-b5bc-bc1878ba74cf"
const DOC_ACME = "7eaa8264-3830-4a32-ab40-c343ff3a2de5"
const DOC_GLOBEX = "b3e5a7c9-9f1b-4d4d-8f6c-8e0a2c4e6a97"

const CHILD = fileURLToPath(new URL("./embeddedChild.ts", import.meta.url))

const tempDirs: Array<string> = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "embedded-ws-"))
  tempDirs.push(dir)
  return dir
}
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

const tempUrl = () => `file:${join(tempDir(), "workspace.db")}`

/** Runs `f` against a store on `url` (demo-seeded when empty), closing it afterwards. */
const withStore = <A, E>(
  url: string,
  f: (ws: EmbeddedWorkspace, sql: SqlClient.SqlClient) => Effect.Effect<A, E>,
  options: Omit<EmbeddedLayerOptions, "url"> = {}
) =>
  Effect.gen(function*() {
    const ws = yield* EmbeddedWorkspace
    const sql = yield* SqlClient.SqlClient
    return yield* f(ws, sql)
  }).pipe(
    Effect.provide(makeEmbeddedLayerWithSql({ url, retryInterval: "1 hour", ...options })),
    // Startup lines and the logged detail of provoked failures would only clutter the run.
    Effect.provideService(References.MinimumLogLevel, "None")
  )

const count = (sql: SqlClient.SqlClient, table: string) =>
  Effect.map(sql<{ n: number }>`SELECT COUNT(*) AS n FROM ${sql(table)}`, ([r]) => Number(r!.n))

const signalsOf = (sql: SqlClient.SqlClient) =>
  sql<{ name: string; delivered_at: string | null; outcome: string | null; attempts: number; last_error: string | null }>`
    SELECT name, delivered_at, outcome, attempts, last_error FROM signals ORDER BY id`

/** Polls `self` until `done` holds (the relay delivers in the background), for at most 10 s. */
const eventually = <A, E>(self: Effect.Effect<A, E>, done: (a: A) => boolean) =>
  Effect.gen(function*() {
    const until = Date.now() + 10_000
    for (;;) {
      const a = yield* self
      if (done(a) || Date.now() > until) return a
      yield* Effect.sleep("20 millis")
    }
  })

const pendingSignals = (sql: SqlClient.SqlClient) =>
  Effect.map(sql<{ n: number }>`SELECT COUNT(*) AS n FROM signals WHERE delivered_at IS NULL`, ([r]) => Number(r!.n))

const rowOf = (sql: SqlClient.SqlClient, id: string) =>
  Effect.map(sql<{ status: string; fields: string }>`SELECT status, fields FROM subledger_rows WHERE id = ${id}`, ([r]) => ({
    status: r!.status,
    fields: JSON.parse(r!.fields) as Record<string, unknown>
  }))

describe("embedded workspace", () => {
  it.live("the demo fixture is valid and seeds an empty database", () =>
    Effect.gen(function*() {
      const demo = yield* readFixture(DEMO_FIXTURE)
      expect(demo.tenants.map((t) => t.slug)).toEqual(["acme", "globex"])
      yield* withStore(tempUrl(), (ws) =>
        Effect.gen(function*() {
          const acme = yield* ws.resolveTenant("acme")
          expect(acme.id).toBe(ACME)
          const entities = yield* ws.listEntities(ACME)
          expect(entities.map((e) => e.slug)).toEqual(["acme-us", "acme-uk"])
          const tasks = yield* ws.listTasks(ACME, ACME_US)
          expect(new Set(tasks.map((t) => t.status))).toEqual(new Set(["IN_PROGRESS", "COMPLETED"]))
        }))
    }))

  describe("transactions", () => {
    it.live("a data batch whose insert fails leaves no rows and no signals", () =>
      withStore(tempUrl(), (ws, sql) =>
        Effect.gen(function*() {
          yield* sql.unsafe(`CREATE TRIGGER boom BEFORE INSERT ON data_records
            WHEN json_extract(NEW.data, '$.boom') IS NOT NULL BEGIN SELECT RAISE(ABORT, 'boom'); END`)
          const failed = yield* ws.ingestData(
            ACME,
            { taskId: TASK_REVIEW, kind: "expense", rows: [{ data: { n: 1 } }, { data: { n: 2 } }, { data: { boom: true } }] },
            Option.some({ taskId: TASK_REVIEW, name: "records_ready" })
          ).pipe(Effect.flip)
          expect(failed._tag).toBe("ServiceUnavailable")
          expect(failed.message).not.toMatch(/INSERT|data_records|boom|SQLITE/i)
          expect(yield* count(sql, "data_records")).toBe(0)
          expect(yield* count(sql, "signals")).toBe(0)

          const ok = yield* ws.ingestData(
            ACME,
            { taskId: TASK_REVIEW, kind: "expense", rows: [{ data: { n: 1 } }, { data: { n: 2 }, sourceRef: { line: 2 } }] },
            Option.some({ taskId: TASK_REVIEW, name: "records_ready" })
          )
          expect(ok.map((r) => r.signaled)).toEqual([true, true])
          expect(yield* count(sql, "data_records")).toBe(2)
          const signals = yield* signalsOf(sql)
          expect(signals).toHaveLength(2)
          // An unknown signal name is recorded and consumed as a no-op.
          expect(signals.every((s) => s.delivered_at !== null && s.outcome?.startsWith("ignored: no handler"))).toBe(true)
        })))

    it.live("a document whose chunks fail to insert leaves no document and no signal", () =>
      withStore(tempUrl(), (ws, sql) =>
        Effect.gen(function*() {
          const before = yield* count(sql, "documents")
          yield* sql.unsafe(`CREATE TRIGGER boom BEFORE INSERT ON document_chunks WHEN NEW.idx = 1
            BEGIN SELECT RAISE(ABORT, 'boom'); END`)
          const failed = yield* ws.putDocument(
            ACME,
            { taskId: TASK_UPLOAD, source: "receipts", filename: "big.bin", contentType: "application/octet-stream", bytes: randomBytes(CHUNK_BYTES + 10) },
            Option.some({ taskId: TASK_UPLOAD, name: "file_submitted", payload: {} })
          ).pipe(Effect.flip)
          expect(failed._tag).toBe("ServiceUnavailable")
          expect(yield* count(sql, "documents")).toBe(before)
          expect(yield* count(sql, "signals")).toBe(0)
          expect((yield* ws.getTask(TASK_UPLOAD)).currentStep).toBe("upload_receipts")
        })))
  })

  describe("outbox delivery (runbook engine)", () => {
    it.live("approve completes the step with decision, reason and time; the last approve completes the task", () =>
      withStore(tempUrl(), (ws, sql) =>
        Effect.gen(function*() {
          yield* ws.signal(ACME, { taskId: TASK_REVIEW, name: "approve", payload: { reason: "Looks right" } })
          const task = yield* ws.getTask(TASK_REVIEW)
          expect(task).toMatchObject({ status: "IN_PROGRESS", currentStep: "sign_off" })
          const snaps = yield* ws.getSnapshots(ACME, TASK_REVIEW)
          expect(snaps.review_expenses).toEqual({ decision: "approved", reason: "Looks right", decidedAt: expect.any(String) })
          expect(Date.parse((snaps.review_expenses as { decidedAt: string }).decidedAt)).not.toBeNaN()

          // A composite child id resolves to its root task.
          yield* ws.signal(ACME, { taskId: `${TASK_REVIEW}:sign_off:approver`, name: "approve", payload: {} })
          expect(yield* ws.getTask(TASK_REVIEW)).toMatchObject({ status: "COMPLETED", currentStep: null })
          const next = yield* ws.getNextStep(ACME, TASK_REVIEW)
          expect(next.step).toBeNull()
          expect(next.steps.every((s) => s.status === "COMPLETED")).toBe(true)
          expect((yield* ws.getSnapshots(ACME, TASK_REVIEW)).sign_off).toMatchObject({ decision: "approved", reason: null })

          const failed = yield* ws.signal(ACME, { taskId: TASK_REVIEW, name: "approve", payload: {} }).pipe(Effect.flip)
          expect(failed).toMatchObject({ _tag: "BadRequest", currentStatus: "COMPLETED" })
          const signals = yield* signalsOf(sql)
          expect(signals.map((s) => [s.name, s.outcome, s.attempts])).toEqual([["approve", "applied", 1], ["approve", "applied", 1]])
        })))

    it.live("reject fails the task", () =>
      withStore(tempUrl(), (ws) =>
        Effect.gen(function*() {
          yield* ws.signal(ACME, { taskId: TASK_SIGN_OFF, name: "reject", payload: { reason: "Duplicate claims" } })
          expect(yield* ws.getTask(TASK_SIGN_OFF)).toMatchObject({ status: "FAILED", currentStep: null })
          expect((yield* ws.getSnapshots(ACME, TASK_SIGN_OFF)).sign_off).toMatchObject({
            decision: "rejected",
            reason: "Duplicate claims"
          })
          const next = yield* ws.getNextStep(ACME, TASK_SIGN_OFF)
          expect(next.steps.map((s) => s.status)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED"])
        })))

    it.live("file_submitted from the submit_file action completes a FILE_UPLOAD step", () =>
      withStore(tempUrl(), (ws) =>
        Effect.gen(function*() {
          const next = yield* ws.getNextStep(ACME, TASK_UPLOAD)
          expect(next.step?.displayHint.component).toBe("FILE_UPLOAD")
          const action = (next.step!.args.actions as Array<{ signalTaskId: string; signalName: string; source: string }>)[0]!
          const doc = yield* ws.putDocument(
            ACME,
            { taskId: TASK_UPLOAD, source: action.source, filename: "r.txt", contentType: "text/plain", bytes: Buffer.from("receipt") },
            Option.some({ taskId: action.signalTaskId, name: action.signalName, payload: { source: action.source } })
          )
          expect(yield* ws.getTask(TASK_UPLOAD)).toMatchObject({ currentStep: "review_expenses" })
          expect((yield* ws.getSnapshots(ACME, TASK_UPLOAD)).upload_receipts).toEqual({
            source: "receipts",
            documentRef: doc.id,
            submittedAt: expect.any(String)
          })
          // On a step that is not FILE_UPLOAD the signal is recorded and changes nothing.
          yield* ws.signal(ACME, { taskId: TASK_UPLOAD, name: "file_submitted", payload: {} })
          expect(yield* ws.getTask(TASK_UPLOAD)).toMatchObject({ currentStep: "review_expenses" })
        })))

    it.live("row_action applies the ledger rules; invalid ones are refused before recording", () =>
      withStore(tempUrl(), (ws, sql) =>
        Effect.gen(function*() {
          const rowAction = (payload: Record<string, unknown>) =>
            ws.signal(ACME, { taskId: TASK_REVIEW, name: "user_action", payload: { kind: "row_action", ledger: "expenses", ...payload } })

          yield* rowAction({ action: "reject_row", rowId: ROW_NEEDS })
          expect((yield* rowOf(sql, ROW_NEEDS)).status).toBe("REJECTED")
          yield* rowAction({ action: "edit_cell", rowId: ROW_NEEDS_2, field: "currency", value: "usd" })
          yield* rowAction({ action: "edit_cell", rowId: ROW_NEEDS_2, field: "amount_gross", value: "612.50" })
          expect((yield* rowOf(sql, ROW_NEEDS_2)).fields).toMatchObject({ currency: "USD", amount_gross: 612.5 })

          const recorded = yield* count(sql, "signals")
          expect(yield* Effect.flip(rowAction({ action: "reject_row", rowId: ROW_REJECTED }))).toMatchObject({
            _tag: "BadRequest",
            currentStatus: "REJECTED"
          })
          expect(yield* Effect.flip(rowAction({ action: "edit_cell", rowId: ROW_NEEDS_2, field: "id", value: "x" }))).toMatchObject({
            _tag: "BadRequest",
            code: "INVALID_FIELD"
          })
          expect(yield* Effect.flip(rowAction({ action: "edit_cell", rowId: ROW_NEEDS_2, field: "amount_gross", value: "12.345" })))
            .toMatchObject({ _tag: "BadRequest" })
          expect((yield* Effect.flip(rowAction({ action: "reject_row", rowId: ROW_GLOBEX })))._tag).toBe("NotFound")
          expect(yield* count(sql, "signals")).toBe(recorded)

          // The direct endpoint agrees with what the row action did.
          expect(yield* Effect.flip(ws.rejectRow(ACME, "expenses", ROW_NEEDS))).toMatchObject({ currentStatus: "REJECTED" })
        })))

    it.live("a failed delivery stays pending with attempts and last_error, and is retried", () =>
      withStore(tempUrl(), (ws, sql) =>
        Effect.gen(function*() {
          yield* sql.unsafe(`CREATE TRIGGER hold BEFORE UPDATE ON tasks BEGIN SELECT RAISE(ABORT, 'tasks are read-only'); END`)
          // The write itself succeeded: the caller hears OK, the signal waits in the outbox.
          yield* ws.signal(ACME, { taskId: TASK_REVIEW, name: "approve", payload: { reason: "ok" } })
          expect((yield* ws.getTask(TASK_REVIEW)).currentStep).toBe("review_expenses")
          const [pending] = yield* signalsOf(sql)
          expect(pending).toMatchObject({ delivered_at: null, attempts: 1 })
          expect(pending!.last_error).toContain("tasks are read-only")

          // In backoff: a normal pass leaves it alone.
          expect(yield* ws.deliverPending()).toMatchObject({ delivered: 0, deferred: 1 })
          yield* sql.unsafe(`DROP TRIGGER hold`)
          expect(yield* ws.deliverPending({ force: true })).toMatchObject({ delivered: 1, failed: 0 })
          expect((yield* ws.getTask(TASK_REVIEW)).currentStep).toBe("sign_off")
          expect((yield* signalsOf(sql))[0]).toMatchObject({ outcome: "applied", attempts: 2 })
        })))

    it.live("a stale decision cannot land on a later step", () =>
      withStore(tempUrl(), (ws, sql) =>
        Effect.gen(function*() {
          yield* sql.unsafe(`CREATE TRIGGER hold BEFORE UPDATE ON tasks BEGIN SELECT RAISE(ABORT, 'hold'); END`)
          // A double click while delivery is failing: the second approval sees the first, still in
          // the outbox, and is a duplicate (nothing recorded).
          yield* ws.signal(ACME, { taskId: TASK_REVIEW, name: "approve", payload: {} })
          yield* ws.signal(ACME, { taskId: TASK_REVIEW, name: "approve", payload: {} })
          expect(yield* signalsOf(sql)).toHaveLength(1)
          // A second one recorded for review_expenses all the same (an older process's, say).
          yield* sql`INSERT INTO signals (tenant_id, root_task_id, task_id, name, payload, expected_step, created_at)
            VALUES (${ACME}, ${TASK_REVIEW}, ${TASK_REVIEW}, 'approve', '{}', 'review_expenses', ${new Date().toISOString()})`
          yield* sql.unsafe(`DROP TRIGGER hold`)
          yield* ws.deliverPending({ force: true })
          expect(yield* ws.getTask(TASK_REVIEW)).toMatchObject({ status: "IN_PROGRESS", currentStep: "sign_off" })
          expect((yield* signalsOf(sql)).map((s) => s.outcome)).toEqual([
            "applied",
            `ignored: step "review_expenses" is no longer current (now "sign_off")`
          ])
        })))

    it.live("signals committed but not delivered (a crash) are delivered after the next start, in the background", () =>
      Effect.gen(function*() {
        const url = tempUrl()
        yield* withStore(url, (_, sql) =>
          sql`INSERT INTO signals (tenant_id, root_task_id, task_id, name, payload, expected_step, created_at)
            VALUES (${ACME}, ${TASK_SIGN_OFF}, ${TASK_SIGN_OFF}, 'approve', '{"reason":"before the crash"}', 'sign_off', ${new Date().toISOString()})`)
        yield* withStore(url, (ws, sql) =>
          Effect.gen(function*() {
            expect(yield* eventually(ws.getTask(TASK_SIGN_OFF), (t) => t.status === "COMPLETED")).toMatchObject({ status: "COMPLETED" })
            expect((yield* signalsOf(sql))[0]!.delivered_at).not.toBeNull()
          }))
      }))
  })

  describe("events", () => {
    it.live("identical re-post returns the stored event; a different body with the same seq is a Conflict", () =>
      withStore(tempUrl(), (ws, sql) =>
        Effect.gen(function*() {
          const dto = { type: "reasoning.delta", source: "worker", seq: 10, payload: { text: "a" }, groupKey: "g1" }
          const first = yield* ws.appendEvent(ACME, TASK_REVIEW, dto)
          expect(first).toEqual({ taskId: TASK_REVIEW, ...dto, createdAt: expect.any(String), position: expect.stringMatching(/^\d+$/), origin: "producer" })
          const again = yield* ws.appendEvent(ACME, TASK_REVIEW, { ...dto, payload: { text: "a" } })
          expect(again).toEqual(first)
          const conflict = yield* Effect.flip(ws.appendEvent(ACME, TASK_REVIEW, { ...dto, payload: { text: "b" } }))
          expect(conflict._tag).toBe("Conflict")
          expect(yield* Effect.flip(ws.appendEvent(ACME, TASK_REVIEW, { ...dto, sourceLabel: "x" }))).toMatchObject({ _tag: "Conflict" })

          yield* ws.appendEvent(ACME, TASK_REVIEW, { ...dto, seq: 7 })
          // A child stream has its own seqs.
          yield* ws.appendEvent(ACME, `${TASK_REVIEW}:review_expenses:agent`, { ...dto, seq: 10, payload: { text: "child" } })
          const { events } = yield* ws.listEvents(ACME, TASK_REVIEW)
          // In the order stored: 7, posted after 10, is read after it.
          expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 10, 7])
          expect(yield* count(sql, "events")).toBeGreaterThan(events.length)
          expect((yield* Effect.flip(ws.appendEvent(GLOBEX, TASK_REVIEW, dto)))._tag).toBe("NotFound")
        })))
  })

  describe("documents", () => {
    it.live("a multi-chunk file is stored in chunks and streams back byte for byte, chunk by chunk", () =>
      withStore(tempUrl(), (ws, sql) =>
        Effect.scoped(Effect.gen(function*() {
          const bytes = randomBytes(2 * CHUNK_BYTES + 12345)
          const doc = yield* ws.putDocument(
            ACME,
            { taskId: TASK_REVIEW, source: "exports", filename: "big.bin", contentType: "application/octet-stream", period: "2026-10", bytes },
            Option.none()
          )
          expect(doc).toMatchObject({ sizeBytes: bytes.length, period: "2026-10", taskId: TASK_REVIEW })
          expect(doc).not.toHaveProperty("schemaSlug")
          const chunks = yield* sql<{ n: number }>`SELECT length(data) AS n FROM document_chunks WHERE document_id = ${doc.id} ORDER BY idx`
          expect(chunks.map((c) => Number(c.n))).toEqual([CHUNK_BYTES, CHUNK_BYTES, 12345])

          const opened = yield* ws.openDocument(ACME, doc.id)
          expect(opened.document).toEqual(doc)
          const parts = yield* Stream.runCollect(opened.body)
          expect(parts.map((p) => p.length)).toEqual([CHUNK_BYTES, CHUNK_BYTES, 12345])
          expect(Buffer.concat(parts).equals(bytes)).toBe(true)

          const empty = yield* ws.putDocument(
            ACME,
            { taskId: TASK_REVIEW, source: "exports", filename: "empty.txt", contentType: "text/plain", bytes: new Uint8Array() },
            Option.none()
          )
          const none = yield* Stream.runCollect((yield* ws.openDocument(ACME, empty.id)).body)
          expect(none).toHaveLength(0)

          // Newest first, filtered by source, at most `limit`.
          const listed = yield* ws.listDocuments(ACME, `${TASK_REVIEW}:x:y`, { source: "exports", limit: 20 })
          expect(listed.map((d) => d.id)).toEqual([empty.id, doc.id])
          expect((yield* ws.listDocuments(ACME, TASK_REVIEW, { limit: 1 })).map((d) => d.id)).toEqual([empty.id])
        }))))

    it.live("a download half read holds no snapshot: the log still checkpoints to empty, later writes are read", () =>
      withStore(tempUrl(), (ws, sql) =>
        Effect.scoped(Effect.gen(function*() {
          const put = (bytes: Uint8Array) =>
            ws.putDocument(ACME, { taskId: TASK_REVIEW, source: "exports", filename: "big.bin", contentType: "application/octet-stream", bytes }, Option.none())
          const first = yield* put(randomBytes(3 * CHUNK_BYTES))
          // The first chunk only: the stream is left unfinished, as a stalled client leaves it.
          const opened = yield* ws.openDocument(ACME, first.id)
          const head = yield* Stream.runCollect(Stream.take(opened.body, 1))
          expect(head[0]!.length).toBe(CHUNK_BYTES)
          const [checkpoint] = yield* sql<{ busy: number; log: number }>`PRAGMA wal_checkpoint(TRUNCATE)`
          expect(Number(checkpoint!.busy)).toBe(0)
          const second = yield* put(Buffer.from("written after"))
          const body = yield* Stream.runCollect((yield* ws.openDocument(ACME, second.id)).body)
          expect(Buffer.concat(body).toString()).toBe("written after")
        }))))
  })

  describe("seeding", () => {
    it.live("loading the same fixture twice leaves one copy", () =>
      Effect.gen(function*() {
        const url = tempUrl()
        const fixture = yield* readFixture(DEMO_FIXTURE)
        const tables = ["tenants", "entities", "workflows", "tasks", "subledger_rows", "documents", "document_chunks", "events", "gl_connections"]
        const counts = (sql: SqlClient.SqlClient) => Effect.forEach(tables, (t) => count(sql, t))
        const once = yield* withStore(url, (_, sql) => counts(sql), { seedFile: DEMO_FIXTURE })
        const twice = yield* withStore(url, (_, sql) => Effect.andThen(loadFixture(fixture), counts(sql)).pipe(Effect.provideService(SqlClient.SqlClient, sql)), {
          seedFile: DEMO_FIXTURE
        })
        expect(twice).toEqual(once)
        expect(once[0]).toBe(2)
        expect(once[3]).toBe(fixture.tasks.length)
        expect(once[7]).toBe(fixture.events.length)
      }))

    it.live("a bad fixture stops the start with a message naming the file and the JSON path; nothing is written", () =>
      Effect.gen(function*() {
        const dir = tempDir()
        const url = `file:${join(dir, "workspace.db")}`
        const file = join(dir, "bad.json")
        const demo = JSON.parse(readFileSync(DEMO_FIXTURE, "utf8"))
        demo.tasks[2].entityId = "00000000-0000-4000-8000-000000000000"
        writeFileSync(file, JSON.stringify(demo))
        const start = Layer.build(makeEmbeddedLayer({ url, seedFile: file })).pipe(Effect.scoped, Effect.provideService(References.MinimumLogLevel, "None"))
        const exit = yield* Effect.exit(start)
        expect(Exit.isFailure(exit)).toBe(true)
        const message = Exit.isFailure(exit) ? JSON.stringify(exit.cause) : ""
        expect(message).toContain(file)
        expect(message).toContain("$.tasks[2].entityId")

        writeFileSync(file, JSON.stringify({ tenants: [{ id: "not-a-uuid", slug: "x", name: "X", extra: 1 }] }))
        const exit2 = yield* Effect.exit(start)
        const message2 = Exit.isFailure(exit2) ? JSON.stringify(exit2.cause) : ""
        expect(message2).toContain("$.tenants[0].id")
        expect(message2).toContain("$.tenants[0].extra")

        const tenants = yield* Effect.flatMap(SqlClient.SqlClient, (sql) => count(sql, "tenants")).pipe(Effect.provide(sqlLayer(url)))
        expect(tenants).toBe(0)
      }))
  })

  it.live("two stores on one file in one process start together and write concurrently", () =>
    Effect.gen(function*() {
      const url = tempUrl()
      // Each layer has its own connections, so they contend for SQLite's lock like two processes:
      // SQLITE_BUSY at once, and the store's asynchronous retry (the holder's event loop keeps running).
      const open = Effect.map(Layer.build(makeEmbeddedLayerWithSql({ url, retryInterval: "1 hour" })), (ctx) => ({
        ws: Context.get(ctx, EmbeddedWorkspace),
        sql: Context.get(ctx, SqlClient.SqlClient)
      }))
      const [a, b] = yield* Effect.all([open, open], { concurrency: 2 })
      expect(yield* count(a.sql, "tenants")).toBe(2)

      const writes = Array.from({ length: 40 }, (_, i) => {
        const ws = i % 2 === 0 ? a.ws : b.ws
        return i % 4 < 2
          // A worker's own stream (a child id): the ingests' audit events go on the root task's.
          ? ws.appendEvent(ACME, `${TASK_REVIEW}:worker:w`, { type: "t", source: "w", seq: 100 + i, payload: { i } })
          : ws.ingestData(ACME, { taskId: TASK_REVIEW, rows: [{ data: { i } }, { data: { i } }] }, Option.some({ taskId: TASK_REVIEW, name: "records_ready" }))
      })
      yield* Effect.all(writes, { concurrency: "unbounded", discard: true })
      expect((yield* b.ws.listEvents(ACME, `${TASK_REVIEW}:worker:w`)).events.filter((e) => e.seq >= 100)).toHaveLength(20)
      expect(yield* count(b.sql, "data_records")).toBe(40)
      yield* a.ws.deliverPending()
      expect(yield* eventually(pendingSignals(b.sql), (n) => n === 0)).toBe(0)
      expect(yield* count(b.sql, "signals")).toBe(40)
    }).pipe(Effect.scoped, Effect.provideService(References.MinimumLogLevel, "None")))

  it.live("two processes on one fresh file: both start (one seeds), both write, nothing is lost", () =>
    Effect.gen(function*() {
      const url = tempUrl()
      const child = (seqBase: number) =>
        Effect.callback<void, Error>((resume) => {
          execFile(NODE, ["--import", "tsx", CHILD, url, "60", String(seqBase)], { cwd: process.cwd() }, (error, _out, err) =>
            resume(error ? Effect.fail(new Error(`child failed: ${err}`)) : Effect.void))
        })
      yield* Effect.all([child(1000), child(2000)], { concurrency: 2 })
      yield* withStore(url, (ws, sql) =>
        Effect.gen(function*() {
          expect(yield* count(sql, "tenants")).toBe(2)
          expect((yield* ws.listEvents(ACME, `${TASK_REVIEW}:worker:child`)).events.filter((e) => e.seq >= 1000)).toHaveLength(60)
          expect(yield* count(sql, "data_records")).toBe(60)
          // What a child left pending (its wait for delivery is bounded) this store's relay delivers.
          expect(yield* eventually(pendingSignals(sql), (n) => n === 0)).toBe(0)
        }))
    }), 60_000)

  it.live("getNextSteps: a task whose runbook does not decode loses its answer only, another tenant's task is null", () =>
    withStore(tempUrl(), (ws, sql) =>
      Effect.gen(function*() {
        yield* sql`INSERT INTO workflows (id, tenant_id, name, runbook) VALUES ('broken', NULL, 'Broken', '{"steps":"no"}')`
        yield* sql`UPDATE tasks SET workflow_id = 'broken' WHERE id = ${TASK_SIGN_OFF}`
        expect(yield* Effect.exit(ws.getNextStep(ACME, TASK_SIGN_OFF))).toMatchObject({ _tag: "Failure" })
        const answers = yield* ws.getNextSteps(ACME, [TASK_REVIEW, TASK_SIGN_OFF, TASK_GLOBEX, TASK_UPLOAD])
        expect(answers.map((a) => [a.taskId, a.nextStep?.step?.id ?? null])).toEqual([
          [TASK_REVIEW, "review_expenses"],
          [TASK_SIGN_OFF, null],
          [TASK_GLOBEX, null],
          [TASK_UPLOAD, "upload_receipts"]
        ])
        // The other tenant's own task answers for it, and a composite child id for its root task.
        const globex = yield* ws.getNextSteps(GLOBEX, [TASK_GLOBEX, TASK_REVIEW, `${TASK_GLOBEX}:step:child`])
        expect(globex.map((a) => a.nextStep !== null)).toEqual([true, false, true])
      })))

  it.live("tenant scoping: another tenant's entity, task, document and row are NotFound", () =>
    withStore(tempUrl(), (ws) =>
      Effect.gen(function*() {
        const tag = <A, E extends { _tag: string }>(e: Effect.Effect<A, E>) => Effect.map(Effect.flip(e), (x) => x._tag)
        expect(yield* tag(ws.getEntity(ACME, GLOBEX_US))).toBe("NotFound")
        expect(yield* tag(ws.getNextStep(ACME, TASK_GLOBEX))).toBe("NotFound")
        expect(yield* tag(ws.getSnapshots(ACME, TASK_GLOBEX))).toBe("NotFound")
        expect(yield* tag(ws.listEvents(ACME, TASK_GLOBEX))).toBe("NotFound")
        expect(yield* tag(ws.signal(ACME, { taskId: TASK_GLOBEX, name: "approve", payload: {} }))).toBe("NotFound")
        expect(yield* tag(Effect.scoped(ws.openDocument(ACME, DOC_GLOBEX)))).toBe("NotFound")
        expect(yield* tag(Effect.scoped(ws.openDocument(GLOBEX, DOC_ACME)))).toBe("NotFound")
        expect(yield* tag(ws.rejectRow(ACME, "expenses", ROW_GLOBEX))).toBe("NotFound")
        expect(yield* tag(ws.updateRow(ACME, "expenses", ROW_GLOBEX, "merchant", "x"))).toBe("NotFound")
        expect(yield* tag(ws.createTask(ACME, GLOBEX_US, { workflowId: "expense-review", context: {} }))).toBe("NotFound")
        expect(yield* tag(ws.createTask(GLOBEX, GLOBEX_US, { workflowId: "bank-reconciliation", context: {} }))).toBe("BadRequest")
        expect(yield* ws.listTasks(ACME, GLOBEX_US)).toEqual([])
        expect(yield* ws.listDocuments(ACME, TASK_GLOBEX, { limit: 20 })).toEqual([])
        expect((yield* ws.listEntities(GLOBEX)).every((e) => e.tenantId === GLOBEX)).toBe(true)
        expect((yield* ws.listWorkflows(GLOBEX)).map((w) => w.id)).not.toContain("bank-reconciliation")
        expect(yield* tag(ws.getRunbook(GLOBEX, "bank-reconciliation"))).toBe("NotFound")
        // getTask is unscoped by design (the gateway compares tenants itself).
        expect((yield* ws.getTask(TASK_GLOBEX)).tenantId).toBe(GLOBEX)
      })))

  it.live("data survives closing and reopening the database file; the demo is not reloaded", () =>
    Effect.gen(function*() {
      const url = tempUrl()
      const created = yield* withStore(url, (ws) =>
        Effect.gen(function*() {
          const task = yield* ws.createTask(ACME, ACME_US, { workflowId: "expense-review", context: { period: "2026-12" } })
          yield* ws.signal(ACME, { taskId: TASK_SIGN_OFF, name: "approve", payload: {} })
          yield* ws.rejectRow(ACME, "expenses", ROW_NEEDS)
          return task
        }))
      expect(created).toMatchObject({ title: "Expense review 2026-12", currentStep: "upload_receipts", context: { period: "2026-12" } })
      yield* withStore(url, (ws, sql) =>
        Effect.gen(function*() {
          expect(yield* ws.getTask(created.id)).toMatchObject({ title: "Expense review 2026-12", status: "IN_PROGRESS" })
          expect(yield* ws.getTask(TASK_SIGN_OFF)).toMatchObject({ status: "COMPLETED" })
          expect((yield* rowOf(sql, ROW_NEEDS)).status).toBe("REJECTED")
          expect(yield* count(sql, "tenants")).toBe(2)
        }))
    }))

  it.live("GL: a connect session completed by the webhook makes the connection ACTIVE; delete removes it", () =>
    withStore(tempUrl(), (ws) =>
      Effect.gen(function*() {
        const session = yield* ws.createGlSession(GLOBEX, "xero")
        expect(session.sessionUrl).toBe(`http://gl.test/workspace/gl/connect/${session.consumerId}`)
        expect(yield* ws.getGlConnection(GLOBEX)).toEqual(Option.none())
        const connection = yield* ws.completeGlSession(session.consumerId, "xero")
        expect(connection).toMatchObject({ tenantId: GLOBEX, status: "ACTIVE", service: "xero" })
        expect(yield* ws.getGlConnection(GLOBEX)).toEqual(Option.some(connection))
        expect((yield* Effect.flip(ws.completeGlSession(session.consumerId, "xero")))._tag).toBe("NotFound")
        yield* ws.deleteGlConnection(GLOBEX)
        yield* ws.deleteGlConnection(GLOBEX)
        expect(yield* ws.getGlConnection(GLOBEX)).toEqual(Option.none())
      }), { publicUrl: "http://gl.test/" }))

  it.live("agent registry: the key is returned once, only its hash is stored, list/get never show it", () =>
    withStore(tempUrl(), (ws, sql) =>
      Effect.gen(function*() {
        const created = yield* ws.createAgent({ kind: "claude", externalRef: "agent-123", tenantSlug: "acme", name: "Reviewer" })
        expect(created).toMatchObject({ kind: "claude", externalRef: "claude://agent-123", tenantId: ACME, name: "Reviewer" })
        expect(created.apiKey).toMatch(/^ak_[A-Za-z0-9_-]{43}$/)

        const [stored] = yield* sql<Record<string, unknown>>`SELECT * FROM agents WHERE id = ${created.id}`
        expect(stored!.api_key_hash).toBe(createHash("sha256").update(created.apiKey).digest("hex"))
        expect(Object.values(stored!)).not.toContain(created.apiKey)

        const { apiKey: _, ...shown } = created
        expect(yield* ws.getAgent(created.id)).toEqual(shown)
        // After the demo fixture's own agent (fixtures/demo.json).
        expect((yield* ws.listAgents(ACME)).slice(-1)).toEqual([shown])
        expect(yield* ws.listAgents(GLOBEX)).toEqual([])
        expect(JSON.stringify(yield* ws.listAgents())).not.toContain(created.apiKey)
        expect((yield* ws.authenticateAgent(created.apiKey)).id).toBe(created.id)
        expect((yield* Effect.flip(ws.authenticateAgent("ak_wrong")))._tag).toBe("NotFound")

        const byUri = yield* ws.createAgent({ kind: "claude", externalRef: "claude://x-9", tenantId: GLOBEX, name: "Other" })
        expect(byUri.externalRef).toBe("claude://x-9")
        expect(byUri.apiKey).not.toBe(created.apiKey)
        expect((yield* Effect.flip(ws.createAgent({ kind: "claude", externalRef: "openai://x", tenantSlug: "acme", name: "n" })))._tag)
          .toBe("BadRequest")
        expect((yield* Effect.flip(ws.createAgent({ kind: "claude", externalRef: "x", tenantSlug: "nope", name: "n" })))._tag)
          .toBe("BadRequest")

        const v1 = yield* ws.createAgentVersion(created.id, { version: "1.0.0", config: { model: "m" } })
        expect(yield* ws.createAgentVersion(created.id, { version: "1.0.0", config: { model: "m" } })).toEqual(v1)
        expect((yield* Effect.flip(ws.createAgentVersion(created.id, { version: "1.0.0", config: { model: "n" } })))._tag).toBe("Conflict")
        expect((yield* ws.getAgent(created.id)).versions).toEqual([v1])

        // Lengths count characters (code points), not UTF-16 units: an emoji is one.
        const emoji = yield* ws.createAgent({ kind: "claude", externalRef: "😀".repeat(512), tenantSlug: "acme", name: "😀".repeat(256) })
        expect(emoji.name).toBe("😀".repeat(256))
        expect((yield* ws.createAgentVersion(emoji.id, { version: "😀".repeat(64) })).version).toBe("😀".repeat(64))
        const refused = [
          Effect.asVoid(ws.createAgent({ kind: "claude", externalRef: "😀".repeat(513), tenantSlug: "acme", name: "n" })),
          Effect.asVoid(ws.createAgent({ kind: "claude", externalRef: "y", tenantSlug: "acme", name: "😀".repeat(257) })),
          Effect.asVoid(ws.createAgentVersion(emoji.id, { version: "😀".repeat(65) }))
        ]
        for (const bad of refused) expect((yield* Effect.flip(bad))._tag).toBe("BadRequest")
        yield* ws.deleteAgent(emoji.id)

        yield* ws.deleteAgent(created.id)
        expect((yield* Effect.flip(ws.getAgent(created.id)))._tag).toBe("NotFound")
        expect((yield* Effect.flip(ws.deleteAgent(created.id)))._tag).toBe("NotFound")
        expect(yield* count(sql, "agent_versions")).toBe(0)
      })))
})
