/**
 * The engine fills the timeline and a table step's args carry its rows
 * (item 4), on the embedded store (the workspace that runs the engine).
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as SqlClient from "effect/sql/SqlClient"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TaskEvent } from "../../src/api/resources.js"
import type { WorkspaceClientService } from "../../src/upstream/WorkspaceClient.js"
import { EmbeddedWorkspace, makeEmbeddedLayerWithSql } from "../../src/workspace/embedded/layer.js"
import { FILE_SUBMITTED_SIGNAL } from "../../src/api/stepSignals.js"

// Ids from fixtures/demo.json.
const ACME = "ded92d4b-f408-46e5-8cce-284491efe71d"
/** At review_expenses (TABLE_REVIEW, ledger expenses), a worker's events seq 1..3. */
const TASK_REVIEW = "694ebd37-72d4-4ae6-b944-eb027435cd70"
/** At upload_receipts (FILE_UPLOAD), no events. */
const TASK_UPLOAD = "1f3a5c7e-9b2d-4f60-8a1c-3e5b7d9f1a20"
/** At sign_off, the last step. */
const TASK_SIGN_OFF = "4c6e8a02-3d5f-4b7c-9e1a-2f4b6d8f0c53"

/** Outside a request nobody is named: every audit and engine payload says so. */
const NOBODY = { actor: null, requestId: null }

const tempDirs: Array<string> = []
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

type Run = <A, E>(f: (ws: WorkspaceClientService, sql: Option.Option<SqlClient.SqlClient>) => Effect.Effect<A, E>) => Effect.Effect<A, unknown>

const embedded: Run = (f) => {
  const dir = mkdtempSync(join(tmpdir(), "engine-events-"))
  tempDirs.push(dir)
  return Effect.gen(function*() {
    const ws = yield* EmbeddedWorkspace
    return yield* f(ws, Option.some(yield* SqlClient.SqlClient))
  }).pipe(
    Effect.provide(makeEmbeddedLayerWithSql({ url: `file:${join(dir, "workspace.db")}`, retryInterval: "1 hour" })),
    Effect.provideService(References.MinimumLogLevel, "None")
  )
}

/** The task's whole timeline, in the store's order. */
const timeline = (ws: WorkspaceClientService, taskId: string) => Effect.map(ws.listEvents(ACME, taskId), (page) => page.events)

/**
 * The gateway's own events are marked so by the store and take no producer seq: they read with
 * seq = their position.
 */
const expectGatewayRecord = (e: TaskEvent) => {
  expect(e.origin).toBe("gateway")
  expect(e.seq).toBe(Number(e.position))
}

/**
 * The engine's events of the task about its steps and status: source "workspace", as [type,
 * payload] (each checked as the gateway's record); the task.waiting a step writes when it becomes
 * current is asserted on its own.
 */
const engineEvents = (ws: WorkspaceClientService, taskId: string) =>
  Effect.map(timeline(ws, taskId), (events) =>
    events.filter((e) => e.source === "workspace" && e.type !== "task.waiting").map((e) => {
      expectGatewayRecord(e)
      return [e.type, e.payload] as const
    }))

/** The positions of the task's events now: the engine's events must come after all of them. */
const positionsNow = (ws: WorkspaceClientService, taskId: string) =>
  Effect.map(timeline(ws, taskId), (events) => events.map((e) => e.position))

const waitingEvents = (ws: WorkspaceClientService, taskId: string) =>
  Effect.map(timeline(ws, taskId), (events) =>
    events.filter((e) => e.type === "task.waiting").map((e) => {
      expectGatewayRecord(e)
      return [e.source, e.payload] as const
    }))

for (const [name, run] of [["embedded store", embedded]] as const) {
  describe(`engine events: ${name}`, () => {
    it.live("an approval writes step.completed with the decision and reason, after what was there, as the gateway's record", () =>
      run((ws) =>
        Effect.gen(function*() {
          const before = yield* positionsNow(ws, TASK_REVIEW)
          yield* ws.signal(ACME, { taskId: TASK_REVIEW, name: "approve", payload: { reason: "looks right" } })
          expect(yield* engineEvents(ws, TASK_REVIEW)).toEqual([
            ["step.completed", { stepId: "review_expenses", decision: "approve", reason: "looks right", ...NOBODY }]
          ])
          // Read after the three seeded events.
          expect(before).toHaveLength(3)
          expect((yield* positionsNow(ws, TASK_REVIEW)).slice(0, 3)).toEqual(before)
          // The next step became current in the same delivery: who it waits for (nobody named here).
          expect(yield* waitingEvents(ws, TASK_REVIEW)).toEqual([
            ["workspace", { stepId: "sign_off", title: "Sign off", component: "APPROVAL", assignees: [] }]
          ])
          // The last step: the task completes, and says so.
          yield* ws.signal(ACME, { taskId: TASK_SIGN_OFF, name: "approve", payload: {} })
          expect(yield* engineEvents(ws, TASK_SIGN_OFF)).toEqual([
            ["step.completed", { stepId: "sign_off", decision: "approve", ...NOBODY }],
            ["task.status_changed", { from: "IN_PROGRESS", to: "COMPLETED" }]
          ])
        })))

    it.live("a rejection writes step.completed (reject) and the status change to FAILED", () =>
      run((ws) =>
        Effect.gen(function*() {
          yield* ws.signal(ACME, { taskId: TASK_REVIEW, name: "reject", payload: { reason: "wrong totals" } })
          expect(yield* engineEvents(ws, TASK_REVIEW)).toEqual([
            ["step.completed", { stepId: "review_expenses", decision: "reject", reason: "wrong totals", ...NOBODY }],
            ["task.status_changed", { from: "IN_PROGRESS", to: "FAILED" }]
          ])
          // After the three seeded events.
          expect((yield* timeline(ws, TASK_REVIEW)).map((e) => e.type).slice(3)).toEqual(["step.completed", "task.status_changed"])
        })))

    it.live("a file submitted to a FILE_UPLOAD step: source.submitted with the document id, then step.completed", () =>
      run((ws) =>
        Effect.gen(function*() {
          const doc = yield* ws.putDocument(
            ACME,
            { taskId: TASK_UPLOAD, source: "receipts", filename: "r.pdf", contentType: "application/pdf", bytes: new Uint8Array([1, 2]) },
            Option.some({ taskId: TASK_UPLOAD, name: FILE_SUBMITTED_SIGNAL, payload: { source: "receipts" } })
          )
          const events = yield* timeline(ws, TASK_UPLOAD)
          // The write's audit event first (in its transaction), then the engine's (on delivery):
          // all three the gateway's records.
          events.forEach(expectGatewayRecord)
          expect(events.map((e: TaskEvent) => [e.type, e.source, e.payload])).toEqual([
            ["file.stored", "audit", {
              documentId: doc.id,
              source: "receipts",
              fileName: "r.pdf",
              contentType: "application/pdf",
              sizeBytes: 2,
              signal: FILE_SUBMITTED_SIGNAL,
              ...NOBODY
            }],
            ["source.submitted", "workspace", { stepId: "upload_receipts", kind: "file", documentIds: [doc.id] }],
            ["step.completed", "workspace", { stepId: "upload_receipts", decision: "submitted", ...NOBODY }],
            ["task.waiting", "workspace", { stepId: "review_expenses", title: "Review flagged expenses", component: "TABLE_REVIEW", assignees: [] }]
          ])
        })))

    it.live("data submitted with the step's signal: source.submitted with the record id; the rows after it are ignored", () =>
      run((ws) =>
        Effect.gen(function*() {
          const stored = yield* ws.ingestData(
            ACME,
            { taskId: TASK_UPLOAD, kind: "receipt", rows: [{ data: { a: 1 } }, { data: { a: 2 } }] },
            Option.some({ taskId: TASK_UPLOAD, name: FILE_SUBMITTED_SIGNAL })
          )
          yield* eventuallyCount(ws, TASK_UPLOAD, 2)
          expect(yield* engineEvents(ws, TASK_UPLOAD)).toEqual([
            ["source.submitted", { stepId: "upload_receipts", kind: "data", recordIds: [stored[0]!.id], recordKind: "receipt" }],
            ["step.completed", { stepId: "upload_receipts", decision: "submitted", ...NOBODY }]
          ])
          // The next step became current in the same delivery: who it waits for.
          expect(yield* waitingEvents(ws, TASK_UPLOAD)).toEqual([
            ["workspace", { stepId: "review_expenses", title: "Review flagged expenses", component: "TABLE_REVIEW", assignees: [] }]
          ])
          // After the write's own audit record (data.ingested).
          const all = yield* timeline(ws, TASK_UPLOAD)
          all.forEach(expectGatewayRecord)
          expect(all.map((e) => e.type)).toEqual(["data.ingested", "source.submitted", "step.completed", "task.waiting"])
        })))

    it.live("ignored signals write no engine event: no handler, a file signal on a table step; a row action writes its audit event only", () =>
      run((ws) =>
        Effect.gen(function*() {
          yield* ws.signal(ACME, { taskId: TASK_REVIEW, name: "custom_ping", payload: {} })
          yield* ws.signal(ACME, { taskId: TASK_REVIEW, name: FILE_SUBMITTED_SIGNAL, payload: { documentRef: "x" } })
          yield* ws.signal(ACME, {
            taskId: TASK_REVIEW,
            name: "user_action",
            payload: { kind: "row_action", ledger: "expenses", action: "reject_row", rowId: "7a9c1e35-6b8d-4f0a-8c2e-5d7f9b1d3f86" }
          })
          expect(yield* engineEvents(ws, TASK_REVIEW)).toEqual([])
          const all = yield* eventuallyAll(ws, TASK_REVIEW, 4)
          // The seeded worker's events 1..3, then the row action's audit record (the gateway's: seq = position).
          expect(all).toHaveLength(4)
          expect(all.slice(0, 3).map((e) => [e.seq, e.origin])).toEqual([[1, "producer"], [2, "producer"], [3, "producer"]])
          expectGatewayRecord(all[3]!)
          expect([all[3]!.type, all[3]!.source, all[3]!.payload]).toEqual(["row.rejected", "audit", {
            ledger: "expenses",
            rowId: "7a9c1e35-6b8d-4f0a-8c2e-5d7f9b1d3f86",
            previousStatus: "NEEDS_ATTENTION",
            newStatus: "REJECTED",
            via: "row_action",
            stepId: "review_expenses",
            ...NOBODY
          }])
        })))

    // Before: the engine took the seq after the highest and a client posting that seq got a
    // Conflict. Now the engine takes no producer's seq: the client's post of any seq is stored.
    it.live("the engine takes no producer's seq: a client posting the seq after the highest (or any) is stored, read after the engine's", () =>
      run((ws) =>
        Effect.gen(function*() {
          yield* ws.appendEvent(ACME, TASK_REVIEW, { type: "note", source: "worker", seq: 40, payload: {} })
          yield* ws.signal(ACME, { taskId: TASK_REVIEW, name: "approve", payload: {} })
          // The decision's step.completed, then the next step's task.waiting (both the gateway's).
          const [decision, waiting] = (yield* timeline(ws, TASK_REVIEW)).filter((e) => e.source === "workspace")
          expectGatewayRecord(decision!)
          expectGatewayRecord(waiting!)
          expect([decision!.type, waiting!.type]).toEqual(["step.completed", "task.waiting"])
          const next = yield* ws.appendEvent(ACME, TASK_REVIEW, { type: "note", source: "worker", seq: 41, payload: {} })
          expect([next.seq, next.origin]).toEqual([41, "producer"])
          // A late lower seq too, and the engine's own number (its position) taken by the producer.
          const late = yield* ws.appendEvent(ACME, TASK_REVIEW, { type: "note", source: "worker", seq: 0, payload: { late: true } })
          const same = yield* ws.appendEvent(ACME, TASK_REVIEW, { type: "note", source: "worker", seq: decision!.seq, payload: { hers: true } })
          // Read in the order written (positions), whatever the seqs.
          const after = (yield* timeline(ws, TASK_REVIEW)).slice(3)
          expect(after.map((e) => [e.seq, e.origin])).toEqual([
            [40, "producer"], [decision!.seq, "gateway"], [waiting!.seq, "gateway"], [41, "producer"], [0, "producer"], [decision!.seq, "producer"]
          ])
          expect(after.map((e) => e.position)).toEqual([
            after[0]!.position, decision!.position, waiting!.position, next.position, late.position, same.position
          ])
          // Still: a different event at one of the producer's own taken seqs is a Conflict.
          const clash = yield* Effect.flip(ws.appendEvent(ACME, TASK_REVIEW, { type: "note", source: "worker", seq: 41, payload: { other: 1 } }))
          expect(clash._tag).toBe("Conflict")
          expect(clash.message).toBe(`seq 41 of source "worker" is already taken by a different event`)
          // The same event retried with its payload's keys in another order is the same event
          // (before: a 409); a value changed deep inside it is not.
          const nested = { a: 1, b: { c: [1, { d: "é", e: null }], f: true } }
          const first = yield* ws.appendEvent(ACME, TASK_REVIEW, { type: "note", source: "worker", seq: 42, payload: nested })
          const reordered = yield* ws.appendEvent(ACME, TASK_REVIEW, {
            type: "note", source: "worker", seq: 42, payload: { b: { f: true, c: [1, { e: null, d: "é" }] }, a: 1 }
          })
          expect(reordered).toEqual(first)
          const deep = yield* Effect.flip(ws.appendEvent(ACME, TASK_REVIEW, {
            type: "note", source: "worker", seq: 42, payload: { b: { f: true, c: [{ e: null, d: "é" }, 1] }, a: 1 }
          }))
          expect(deep._tag).toBe("Conflict")
        })))

    it.live("a table step's args carry the task's rows of its ledger, with the fields editable now", () =>
      run((ws) =>
        Effect.gen(function*() {
          const next = yield* ws.getNextStep(ACME, TASK_REVIEW)
          const rows = next.step?.args.rows as Array<{ id: string; status: string; fields: Record<string, unknown>; editable: Array<string> }>
          // The task's expenses rows only: not its journal proposal, not another task's or an unassigned row.
          expect(rows.map((r) => r.id)).toEqual([
            "0349944d-fb03-40cf-a73a-21b10c2a61e9",
            "7a9c1e35-6b8d-4f0a-8c2e-5d7f9b1d3f86",
            "8b0d2f46-7c9e-4a1b-9d3f-6e8a0c2e4a97",
            "9c1e3a57-8d0f-4b2c-8e4a-7f9b1d3f5ba8",
            "ad2f4b68-9e1a-4c3d-9f5b-8a0c2e4a6cb9",
            "eff2b18c-a2fe-42cb-8fdb-bf71a794b101"
          ].sort())
          const byId = new Map(rows.map((r) => [r.id, r]))
          const needs = byId.get("0349944d-fb03-40cf-a73a-21b10c2a61e9")!
          expect(needs.status).toBe("NEEDS_ATTENTION")
          expect(needs.editable).toEqual([
            "amount_gross", "amount_net", "amount_tax", "currency", "merchant", "category", "description", "expense_date", "gl_account"
          ])
          expect(typeof needs.fields.merchant).toBe("string")
          expect(byId.get("eff2b18c-a2fe-42cb-8fdb-bf71a794b101")!.editable).toEqual([]) // REJECTED
          // An edit shows in the next read.
          yield* ws.updateRow(ACME, "expenses", needs.id, "merchant", "Changed Ltd")
          const again = (yield* ws.getNextStep(ACME, TASK_REVIEW)).step?.args.rows as Array<{ id: string; fields: Record<string, unknown> }>
          expect(again.find((r) => r.id === needs.id)!.fields.merchant).toBe("Changed Ltd")
          // Other steps carry no rows.
          expect((yield* ws.getNextStep(ACME, TASK_SIGN_OFF)).step?.args.rows).toBeUndefined()
        })))
  })
}

/** Waits (the relay may deliver in the background) until the task has `n` events of any source. */
const eventuallyAll = (ws: WorkspaceClientService, taskId: string, n: number) =>
  Effect.gen(function*() {
    const until = Date.now() + 10_000
    let events = yield* timeline(ws, taskId)
    while (events.length < n && Date.now() < until) {
      yield* Effect.sleep("20 millis")
      events = yield* timeline(ws, taskId)
    }
    return events
  })

/** Waits (the relay may deliver in the background) until the task has `n` engine events. */
const eventuallyCount = (ws: WorkspaceClientService, taskId: string, n: number) =>
  Effect.gen(function*() {
    const until = Date.now() + 10_000
    while ((yield* engineEvents(ws, taskId)).length < n && Date.now() < until) yield* Effect.sleep("20 millis")
  })

describe("engine events: embedded store delivery", () => {
  it.live("written in the delivery's transaction: a failed delivery writes none, the retry writes them once, redelivery never", () =>
    embedded((ws, sqlOption) =>
      Effect.gen(function*() {
        const sql = Option.getOrThrow(sqlOption)
        const store = ws as EmbeddedWorkspace
        // The engine's event insert fails: the whole delivery rolls back.
        yield* sql.unsafe(`CREATE TRIGGER no_engine_events BEFORE INSERT ON events
          WHEN NEW.source = 'workspace' BEGIN SELECT RAISE(ABORT, 'refused'); END`)
        yield* ws.signal(ACME, { taskId: TASK_SIGN_OFF, name: "approve", payload: {} })
        yield* store.deliverPending({ force: true })
        expect(yield* engineEvents(ws, TASK_SIGN_OFF)).toEqual([])
        expect((yield* ws.getTask(TASK_SIGN_OFF)).status).toBe("IN_PROGRESS")
        yield* sql.unsafe(`DROP TRIGGER no_engine_events`)
        yield* store.deliverPending({ force: true })
        expect((yield* engineEvents(ws, TASK_SIGN_OFF)).map(([type]) => type)).toEqual(["step.completed", "task.status_changed"])
        expect((yield* ws.getTask(TASK_SIGN_OFF)).status).toBe("COMPLETED")
        yield* store.deliverPending({ force: true })
        expect(yield* engineEvents(ws, TASK_SIGN_OFF)).toHaveLength(2)
      })))
})
