/**
 * On PostgreSQL: clients' appends racing the engine's delivery. The delivery
 * locks the task's row (FOR UPDATE) and writes its events in its own transaction. Before the
 * timeline had positions, the engine read the highest seq and inserted the next one, so a client
 * posting that very seq meanwhile had to wait for the task's row and then got a 409 (and before
 * that fix, the two deadlocked). Now the gateway's events take no producer seq (stored with seq
 * NULL, read with seq = their position): whatever seq a client posts, its append is stored, and
 * the engine's insert never waits for it.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as SqlClient from "effect/sql/SqlClient"
import type { TaskEvent } from "../../src/api/resources.js"
import { WorkspaceClient } from "../../src/upstream/WorkspaceClient.js"
import { makeEmbeddedLayerWithSql } from "../../src/workspace/embedded/layer.js"
import { appendToTimeline } from "../../src/workspace/embedded/timeline.js"
import { testDatabase } from "../support/postgres.js"
import { contractFixture, ID } from "../workspace/contractFixture.js"

const layerOf = (url: string) =>
  makeEmbeddedLayerWithSql({ url, fixture: contractFixture(), retryInterval: "1 hour" }).pipe(
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error"))
  )

const note = (seq: number, source = "worker") => ({ type: "note", source, seq, payload: { seq } })

/** PostgreSQL positions: the writing transaction, then the number. */
const PG_POSITION = /^\d+-\d+$/

describe("clients' appends racing the engine's delivery on PostgreSQL", () => {
  it.live("the engine's insert (task row locked) never waits for a client's append; a client posting any seq, the old engine's next included, is stored", () =>
    Effect.gen(function*() {
      const url = yield* Effect.promise(() => testDatabase("seqrace"))
      yield* Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const before = (yield* ws.listEvents(ID.tenantA, ID.taskApprove)).events
        // What the old engine took next: the seq after the highest.
        const next = before.reduce((max, e) => Math.max(max, e.seq), 0) + 1

        // The engine's delivery, held open in the middle: the task's row locked (as deliverBatch
        // does), then its events written by the store's own appendToTimeline once the clients have
        // inserted theirs. The engine must never wait for a client's append (that wait is half of
        // a deadlock): a wait longer than lock_timeout fails its insert.
        const sql = yield* SqlClient.SqlClient
        const locked = yield* Deferred.make<void>()
        const go = yield* Deferred.make<void>()
        const delivery = yield* Effect.forkChild(Effect.result(sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT id FROM tasks WHERE id = ${ID.taskApprove} FOR UPDATE`
          yield* sql`SET LOCAL lock_timeout = '250ms'`
          yield* Deferred.succeed(locked, undefined)
          yield* Deferred.await(go)
          yield* appendToTimeline(sql, ID.tenantA, ID.taskApprove, [{ type: "step.completed", payload: { stepId: "first" } }], new Date().toISOString())
        }))))
        yield* Deferred.await(locked)
        const clients = yield* Effect.forkChild(Effect.all(
          [note(next), note(next + 1), note(next, "other-worker")].map((dto) => Effect.result(ws.appendEvent(ID.tenantA, ID.taskApprove, dto))),
          { concurrency: "unbounded" }
        ))
        // The clients' rows are in (their transactions then wait for the task's row, for their
        // foreign key): the engine inserts now.
        yield* Effect.sleep("300 millis")
        yield* Deferred.succeed(go, undefined)
        const delivered = yield* Fiber.join(delivery)
        expect(delivered._tag, delivered._tag === "Failure" ? String(delivered.failure) : "").toBe("Success")

        // Every client's append is stored, at the seq it posted (none is a Conflict).
        const appended = yield* Fiber.join(clients)
        const stored = appended.map((r) => {
          expect(r._tag).toBe("Success")
          return (r as { success: TaskEvent }).success
        })
        expect(stored.map((e) => [e.source, e.seq, e.origin])).toEqual([
          ["worker", next, "producer"],
          ["worker", next + 1, "producer"],
          ["other-worker", next, "producer"]
        ])

        // Read after what was there: the engine's record (seq = its position) and the three, each once.
        const after = (yield* ws.listEvents(ID.tenantA, ID.taskApprove, { after: before.at(-1)?.position ?? "0" })).events
        expect(after).toHaveLength(4)
        expect(new Set(after.map((e) => e.position)).size).toBe(4)
        for (const e of after) expect(e.position).toMatch(PG_POSITION)
        const record = after.filter((e) => e.origin === "gateway")
        expect(record.map((e) => [e.source, e.type])).toEqual([["workspace", "step.completed"]])
        expect(record[0]!.seq).toBe(Number(record[0]!.position.split("-")[1]))
        expect(after.filter((e) => e.origin === "producer").map((e) => e.position).sort()).toEqual(stored.map((e) => e.position).sort())
      }).pipe(Effect.provide(layerOf(url)))
    }), 30_000)

  it.live("real decisions racing clients' appends of any seq: every append stored, both decisions applied, the engine's events written once", () =>
    Effect.gen(function*() {
      const url = yield* Effect.promise(() => testDatabase("seqrace2"))
      yield* Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const before = (yield* ws.listEvents(ID.tenantA, ID.taskApprove)).events
        const highest = before.reduce((max, e) => Math.max(max, e.seq), 0)
        // The seqs the old engine would have taken for the two decisions' events, and more.
        const seqs = Array.from({ length: 12 }, (_, i) => highest + 1 + i)
        const decide = (reason: string) =>
          ws.signal(ID.tenantA, { taskId: ID.taskApprove, name: "approve", payload: { reason } })
        const [appended] = yield* Effect.all([
          Effect.all(seqs.map((seq) => Effect.result(ws.appendEvent(ID.tenantA, ID.taskApprove, note(seq)))), { concurrency: "unbounded" }),
          Effect.andThen(decide("first"), decide("second"))
        ], { concurrency: "unbounded" })
        for (const r of appended) expect(r._tag).toBe("Success")
        expect(yield* ws.getTask(ID.taskApprove)).toMatchObject({ status: "COMPLETED", currentStep: null })

        const timeline = (yield* ws.listEvents(ID.tenantA, ID.taskApprove)).events
        expect(new Set(timeline.map((e) => e.position)).size).toBe(timeline.length)
        expect(timeline.filter((e) => e.source === "worker" && e.seq > highest).map((e) => [e.seq, e.origin]).sort(([a], [b]) => Number(a) - Number(b)))
          .toEqual(seqs.map((seq) => [seq, "producer"]))
        const engine = timeline.filter((e) => e.source === "workspace")
        // The first decision makes the next step current: its task.waiting comes between.
        expect(engine.map((e) => e.type)).toEqual(["step.completed", "task.waiting", "step.completed", "task.status_changed"])
        for (const e of engine) expect(e.origin).toBe("gateway")
      }).pipe(Effect.provide(layerOf(url)))
    }), 60_000)
})
