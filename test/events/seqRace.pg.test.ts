/**
 * Issue 22 item 3 on PostgreSQL: a client's append racing the engine for the same seq. The
 * engine's delivery locks the task's row (FOR UPDATE), reads the highest seq and inserts the
 * next one. A client posting that very seq meanwhile must neither deadlock with it nor make it
 * fail: the client waits for the task's row before inserting, and then gets the ordinary 409.
 * (Before: the client inserted first and waited in its foreign-key check for the row the engine
 * held, the engine waited for the client's row: a deadlock, broken after deadlock_timeout.)
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as Pg from "pg"
import { WorkspaceClient } from "../../src/upstream/WorkspaceClient.js"
import { makeEmbeddedLayerWithSql } from "../../src/workspace/embedded/layer.js"
import { testDatabase } from "../support/postgres.js"
import { contractFixture, ID } from "../workspace/contractFixture.js"

describe("a client's append racing the engine's seq on PostgreSQL", () => {
  it.live("the engine's insert goes through; the client's append of the same seq waits, then is a 409", () =>
    Effect.gen(function*() {
      const url = yield* Effect.promise(() => testDatabase("seqrace"))
      const layer = makeEmbeddedLayerWithSql({ url, fixture: contractFixture(), retryInterval: "1 hour" }).pipe(
        Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error"))
      )
      yield* Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const events = yield* ws.listEvents(ID.tenantA, ID.taskApprove)
        const next = events.reduce((max, e) => Math.max(max, e.seq), 0) + 1

        // What the engine's delivery does, held open in the middle: the task's row locked, the seq chosen.
        const engine = new Pg.Client({ connectionString: url })
        yield* Effect.promise(() => engine.connect())
        try {
          yield* Effect.promise(() => engine.query("BEGIN"))
          yield* Effect.promise(() => engine.query("SELECT id FROM tasks WHERE id = $1 FOR UPDATE", [ID.taskApprove]))
          // The engine must never wait for a client's append (that wait is half of a deadlock): a
          // wait longer than this fails its insert below.
          yield* Effect.promise(() => engine.query("SET LOCAL lock_timeout = '250ms'"))

          const client = yield* Effect.forkChild(Effect.result(
            ws.appendEvent(ID.tenantA, ID.taskApprove, { type: "note", source: "worker", seq: next, payload: {} })
          ))
          yield* Effect.sleep("300 millis")
          const inserted = yield* Effect.promise(() =>
            engine.query(
              `INSERT INTO events (task_id, seq, tenant_id, root_task_id, type, source, payload, created_at)
               VALUES ($1, $2, $3, $1, 'step.completed', 'workspace', '{}', $4)`,
              [ID.taskApprove, next, ID.tenantA, new Date().toISOString()]
            ).then(() => "inserted", (e: Error) => `failed: ${e.message}`)
          )
          yield* Effect.promise(() => engine.query(inserted === "inserted" ? "COMMIT" : "ROLLBACK"))
          expect(inserted).toBe("inserted")

          const appended = yield* Fiber.join(client)
          expect(appended._tag).toBe("Failure")
          if (appended._tag === "Failure") {
            expect(appended.failure._tag).toBe("Conflict")
            expect(appended.failure.message).toContain(`seq ${next}`)
          }
          const after = yield* ws.listEvents(ID.tenantA, ID.taskApprove, { afterSeq: next - 1 })
          expect(after.map((e) => [e.seq, e.source])).toEqual([[next, "workspace"]])
        } finally {
          yield* Effect.promise(() => engine.end())
        }
      }).pipe(Effect.provide(layer))
    }), 30_000)
})
