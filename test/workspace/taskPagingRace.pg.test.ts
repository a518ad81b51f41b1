/**
 * The task list's cursor (`afterId`, keyset on the tasks' insertion order)
 * must not skip a task created concurrently on PostgreSQL. There the order is an identity
 * column, drawn when a task's INSERT runs but seen only at its commit: a task drawn first and
 * committed second would land behind a cursor a reader already took past it, and every page
 * after that cursor would leave it out. Task creations of one entity therefore commit in the
 * order they draw. Here a trigger holds one creation between its draw and its commit.
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
import { contractFixture, ID, WF } from "./contractFixture.js"

describe("paging an entity's tasks while tasks are created on PostgreSQL", () => {
  it.live("a task created before another is never behind a cursor taken past the other", () =>
    Effect.gen(function*() {
      const url = yield* Effect.promise(() => testDatabase("pagerace"))
      const layer = makeEmbeddedLayerWithSql({ url, fixture: contractFixture(), retryInterval: "1 hour" }).pipe(
        Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error"))
      )
      const admin = new Pg.Client({ connectionString: url })
      yield* Effect.promise(() => admin.connect())
      try {
        yield* Effect.gen(function*() {
          const ws = yield* WorkspaceClient
          // The layer has migrated: a creation whose context says "slow" waits after drawing its rowid.
          yield* Effect.promise(() =>
            admin.query(`CREATE FUNCTION slow_task() RETURNS trigger AS $$
              BEGIN IF NEW.context LIKE '%slow%' THEN PERFORM pg_sleep(1.5); END IF; RETURN NEW; END $$ LANGUAGE plpgsql;
              CREATE TRIGGER slow_task BEFORE INSERT ON tasks FOR EACH ROW EXECUTE FUNCTION slow_task();`)
          )
          const slow = yield* Effect.forkChild(ws.createTask(ID.tenantA, ID.entityA1, { workflowId: WF.approvals, context: { slow: true } }))
          yield* Effect.sleep("300 millis")
          const quick = yield* ws.createTask(ID.tenantA, ID.entityA1, { workflowId: WF.approvals, context: {} })
          // A reader pages now: up to the quick task, whose id becomes its cursor.
          const seen = (yield* ws.listTasks(ID.tenantA, ID.entityA1, { limit: 1000 })).map((t) => t.id)
          expect(seen).toContain(quick.id)
          const created = yield* Fiber.join(slow)
          const upToQuick = seen.slice(0, seen.indexOf(quick.id) + 1)
          const rest = (yield* ws.listTasks(ID.tenantA, ID.entityA1, { afterId: quick.id })).map((t) => t.id)
          const all = (yield* ws.listTasks(ID.tenantA, ID.entityA1)).map((t) => t.id)
          expect([...upToQuick, ...rest]).toEqual(all)
          expect(all).toContain(created.id)
        }).pipe(Effect.provide(layer))
      } finally {
        yield* Effect.promise(() => admin.end())
      }
    }), 60_000)
})
