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
import { enqueueWebhooks } from "./webhookOutbox.js"

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

/** Any constant: the shared advisory lock every write transaction of the store holds (PostgreSQL). */
export const TIMELINE_WRITER_LOCK = 7_140_031

/**
 * PostgreSQL: marks the transaction as one of this store's writers, before it has a transaction
 * id (its first statement): a reader then waits only for this database's writers, never for a
 * long transaction of another database or application on the same server (see `settledEvents`).
 */
export const asTimelineWriter = (sql: SqlClient.SqlClient): Effect.Effect<void, SqlError> =>
  sql.onDialectOrElse({
    pg: () => Effect.asVoid(sql`SELECT pg_advisory_xact_lock_shared(${TIMELINE_WRITER_LOCK})`),
    orElse: () => Effect.void
  })

/**
 * PostgreSQL: the oldest transaction id of this store's writers still running (or the snapshot's
 * xmax when none runs): rows of older transactions are settled, no later commit lands before
 * them. A running transaction counts unless it is shown not to be one: its id lock is held by a
 * transaction without the writer lock (a transaction that ended meanwhile still counts: its rows
 * are not in this snapshot).
 */
const oldestRunningWriter = (sql: SqlClient.SqlClient) =>
  sql`COALESCE((
        SELECT x.x FROM pg_snapshot_xip(pg_current_snapshot()) AS x(x)
        WHERE NOT EXISTS (
          SELECT 1 FROM pg_locks t
          WHERE t.locktype = 'transactionid'
            AND t.transactionid::text = ((x.x::text)::numeric % 4294967296)::text
            AND NOT EXISTS (
              SELECT 1 FROM pg_locks a
              WHERE a.locktype = 'advisory' AND a.virtualtransaction = t.virtualtransaction
                AND a.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                AND a.classid = 0 AND a.objid = ${TIMELINE_WRITER_LOCK} AND a.objsubid = 1))
        ORDER BY x.x LIMIT 1
      ), pg_snapshot_xmax(pg_current_snapshot()))`

/**
 * The rows a reader may take. PostgreSQL: only those of transactions older than every writer of
 * this store still running (ordered by transaction first, so no later commit lands behind a
 * reader's cursor). SQLite: every row (writes are serial).
 */
export const settledEvents = (sql: SqlClient.SqlClient) =>
  sql.onDialectOrElse({
    pg: () => sql`AND events.tx < ${oldestRunningWriter(sql)}`,
    orElse: () => sql``
  })

/**
 * Webhook messages (aliased `m`) a deliverer may send, by the same rule: a chain is in timeline
 * order, (`tx`, `id`), so its head is sent only once no older writer can still add before it.
 */
export const settledMessages = (sql: SqlClient.SqlClient) =>
  sql.onDialectOrElse({
    pg: () => sql`AND m.tx < ${oldestRunningWriter(sql)}`,
    orElse: () => sql``
  })

export const appendToTimeline = (
  sql: SqlClient.SqlClient,
  tenantId: string,
  rootTaskId: string,
  events: ReadonlyArray<EngineEvent>,
  createdAt: string
): Effect.Effect<void, SqlError> =>
  !Arr.isReadonlyArrayNonEmpty(events) ? Effect.void : Effect.gen(function*() {
    yield* beforePositions(sql)
    yield* sql`INSERT INTO events ${
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
    // The tenant's webhook subscriptions get these events from the same transaction (the outbox).
    yield* enqueueWebhooks(sql, tenantId, rootTaskId, events, createdAt)
  })
