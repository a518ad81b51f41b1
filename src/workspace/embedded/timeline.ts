/**
 * Appends the engine's and the audit's events to a task's timeline, inside the caller's
 * transaction, marked as the gateway's (`origin`). They take no seq: the store reads them with
 * seq = position, so a write reads nothing first and takes no lock of the task's (concurrent
 * writes to one task on several replicas do not queue), and no producer's seq is ever taken.
 */
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import { ENGINE_EVENT_SOURCE, type EngineEvent } from "../../domain/engine.js"
import { toJson } from "./db.js"

/**
 * PostgreSQL: gives the transaction its id before a position is taken, so that a reader, which
 * takes only events of transactions older than every one still running, cannot pass a position
 * whose transaction has no id yet (the id is otherwise assigned by the insert, after its default
 * position). SQLite's writes are serial: positions commit in order.
 */
export const beforePositions = (sql: SqlClient.SqlClient): Effect.Effect<void, SqlError> =>
  sql.onDialectOrElse({
    pg: () => Effect.asVoid(sql`SELECT pg_current_xact_id()::text`),
    orElse: () => Effect.void
  })

export const appendToTimeline = (
  sql: SqlClient.SqlClient,
  tenantId: string,
  rootTaskId: string,
  events: ReadonlyArray<EngineEvent>,
  createdAt: string
): Effect.Effect<void, SqlError> =>
  !Arr.isReadonlyArrayNonEmpty(events) ? Effect.void : Effect.andThen(
    beforePositions(sql),
    sql`INSERT INTO events ${
      sql.insert(Arr.map(events, (e) => ({
        task_id: rootTaskId,
        seq: null,
        origin: "gateway",
        tenant_id: tenantId,
        root_task_id: rootTaskId,
        type: e.type,
        source: e.source ?? ENGINE_EVENT_SOURCE,
        source_label: null,
        payload: toJson(e.payload),
        group_key: null,
        created_at: createdAt
      })))
    }`
  )
