/**
 * Appends the engine's and the audit's events to a task's timeline, inside the caller's
 * transaction: at the seqs after the task's highest, read under the write lock the transaction
 * holds (SQLite's single writer; on PostgreSQL the caller has locked the task's row, and a
 * client's own post of one of these seqs afterwards gets the 409 for a different body).
 */
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import { ENGINE_EVENT_SOURCE, type EngineEvent } from "../../domain/engine.js"
import { toJson } from "./db.js"
import { enqueueWebhooks } from "./webhookOutbox.js"

export const appendToTimeline = (
  sql: SqlClient.SqlClient,
  tenantId: string,
  rootTaskId: string,
  events: ReadonlyArray<EngineEvent>,
  createdAt: string
): Effect.Effect<void, SqlError> =>
  !Arr.isReadonlyArrayNonEmpty(events) ? Effect.void : Effect.gen(function*() {
    const [top] = yield* sql<{ m: number | null }>`SELECT MAX(seq) AS m FROM events WHERE task_id = ${rootTaskId}`
    const base = top?.m == null ? 0 : Number(top.m)
    yield* sql`INSERT INTO events ${
      sql.insert(Arr.map(events, (e, i) => ({
        task_id: rootTaskId,
        seq: base + 1 + i,
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
    // The tenant's webhook subscriptions get these events from the same transaction (the outbox).
    yield* enqueueWebhooks(sql, tenantId, rootTaskId, events, createdAt)
  })
