/**
 * The outbox relay on PostgreSQL, in-process: a replica's lease on signals keeps other relays
 * off them until it runs out (a replica that died mid-delivery), then they are taken over and
 * applied once; a lost connection costs a read nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import { WorkspaceClient } from "../../src/upstream/WorkspaceClient.js"
import { EmbeddedWorkspace, makeEmbeddedLayerWithSql } from "../../src/workspace/embedded/layer.js"
import { testDatabase } from "../support/postgres.js"
import { contractFixture, ID, WF } from "./contractFixture.js"

const LEASE_MS = 1000

const onPostgres = Layer.unwrap(
  Effect.map(Effect.promise(() => testDatabase("lease")), (url) =>
    makeEmbeddedLayerWithSql({ url, fixture: contractFixture(), signalLeaseMs: LEASE_MS, retryInterval: "1 hour" }))
).pipe(Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error")))

const run = <A, E>(body: Effect.Effect<A, E, WorkspaceClient | EmbeddedWorkspace | SqlClient.SqlClient>) =>
  body.pipe(Effect.provide(onPostgres))

describe("outbox relay on PostgreSQL", () => {
  it.live("signals under another replica's live lease wait for it to run out, then are applied once", () =>
    run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const store = yield* EmbeddedWorkspace
      const before = yield* store.getTask(ID.taskApprove)
      expect(before.currentStep).not.toBeNull()
      // What a replica that died mid-delivery leaves: an approval it had claimed, lease still running.
      yield* sql`INSERT INTO signals (tenant_id, root_task_id, task_id, name, payload, expected_step, created_at,
          claimed_by, claimed_until_ms)
        VALUES (${ID.tenantA}, ${ID.taskApprove}, ${ID.taskApprove}, 'approve', '{}', ${before.currentStep},
          ${new Date().toISOString()}, 'dead-replica', (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint + ${LEASE_MS})`
      const early = yield* store.deliverPending()
      expect(early.delivered).toBe(0)
      expect(early.deferred).toBe(1)
      expect((yield* store.getTask(ID.taskApprove)).currentStep).toBe(before.currentStep)

      yield* Effect.sleep(LEASE_MS + 200)
      const late = yield* store.deliverPending()
      expect(late.delivered).toBe(1)
      const after = yield* store.getTask(ID.taskApprove)
      expect(after.currentStep).not.toBe(before.currentStep)
      // Delivered by this process, exactly once; another pass finds nothing.
      const rows = yield* sql<{ claimed_by: string; attempts: number; outcome: string }>`
        SELECT claimed_by, attempts, outcome FROM signals WHERE root_task_id = ${ID.taskApprove}`
      expect(rows).toHaveLength(1)
      expect(rows[0]!.claimed_by).not.toBe("dead-replica")
      expect(Number(rows[0]!.attempts)).toBe(1)
      expect(rows[0]!.outcome).toBe("applied")
      expect((yield* store.deliverPending()).delivered).toBe(0)
      expect((yield* store.getTask(ID.taskApprove)).currentStep).toBe(after.currentStep)
    })), 30_000)

  it.live("after the server drops every connection, reads still answer and writes answer or fail as 503", () =>
    run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const ws = yield* WorkspaceClient
      yield* ws.listEntities(ID.tenantA)
      // Cut every connection of this database but the one asking.
      yield* sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()`
      yield* sql`SELECT pg_terminate_backend(pg_backend_pid())`.pipe(Effect.ignore)
      expect((yield* ws.resolveTenant("alpha")).id).toBe(ID.tenantA)
      expect((yield* ws.listEntities(ID.tenantA)).length).toBe(2)
      const write = yield* Effect.result(ws.createTask(ID.tenantA, ID.entityA1, { workflowId: WF.approvals, context: {} }))
      if (write._tag === "Failure") expect(write.failure._tag).toBe("ServiceUnavailable")
      else expect(write.success.workflowId).toBe(WF.approvals)
    })), 30_000)
})
