/** The embedded store's task events: appended by seq (a retried post answers the stored event), read in pages. */
import * as Effect from "effect/Effect"
import { Conflict } from "../../api/errors.js"
import { rootTaskId } from "../../api/ids.js"
import { EVENT_SIZE_OVERHEAD, eventsWithinBytes } from "../../api/eventPaging.js"
import type { TaskEvent } from "../../api/resources.js"
import type { WorkspaceClientService } from "../../upstream/WorkspaceClient.js"
import { type EventRow, eventOfRow, nowIso, toJson } from "./db.js"
import { sameEvent } from "../../domain/engine.js"
import { writeFingerprint } from "../../domain/idempotency.js"
import type { Transactions } from "./transaction.js"

export const eventRecords = (tx: Transactions): Pick<WorkspaceClientService, "appendEvent" | "listEvents"> => {
  const { sql, guard, bell, taskOf, write, idempotent } = tx
  return {
    appendEvent: (tenantId, taskId, dto) =>
      write(idempotent(tenantId, writeFingerprint.appendEvent(taskId, dto), Effect.gen(function*() {
        // PostgreSQL: wait for a delivery holding the task's row (it takes its events' seqs at
        // max+1) before inserting. Inserting first, the foreign-key check would wait for that
        // row while the delivery waits for this seq: a deadlock. SQLite's writes are serial.
        yield* sql.onDialectOrElse({
          pg: () => Effect.asVoid(sql`SELECT id FROM tasks WHERE id = ${rootTaskId(taskId)} FOR KEY SHARE`),
          orElse: () => Effect.void
        })
        const task = yield* taskOf(tenantId, taskId)
        const payload = toJson(dto.payload)
        const inserted = yield* sql<EventRow>`INSERT INTO events ${
          sql.insert({
            task_id: taskId,
            seq: dto.seq,
            tenant_id: tenantId,
            root_task_id: task.id,
            type: dto.type,
            source: dto.source,
            source_label: dto.sourceLabel ?? null,
            payload,
            group_key: dto.groupKey ?? null,
            created_at: nowIso()
          })
        } ON CONFLICT (task_id, seq) DO NOTHING RETURNING *`
        if (inserted[0] !== undefined) return eventOfRow(inserted[0])
        // The seq is taken: a retried identical post gets the stored event, anything else a 409.
        const [existing] = yield* sql<EventRow>`SELECT * FROM events WHERE task_id = ${taskId} AND seq = ${dto.seq}`
        const same = existing !== undefined && sameEvent(
          { type: existing.type, source: existing.source, sourceLabel: existing.source_label, groupKey: existing.group_key, payload: existing.payload },
          { ...dto, payload }
        )
        return same
          ? eventOfRow(existing)
          : yield* Effect.fail(new Conflict({ message: `seq ${dto.seq} is already taken by a different event` }))
      }))).pipe(guard("appendEvent"), Effect.tap(() => Effect.sync(() => bell.ring(taskId)))),

    listEvents: (tenantId, taskId, page = {}) =>
      Effect.gen(function*() {
        yield* taskOf(tenantId, taskId)
        const after = page.afterSeq !== undefined ? sql`AND seq > ${page.afterSeq}` : sql``
        let limit = page.limit
        let upTo = sql``
        if (page.maxBytes !== undefined) {
          // Sizes first (small rows), so a page of large events is never read whole to be cut;
          // octet_length comes from the record header (SQLite 3.43+, PostgreSQL): no payload is read.
          const sizes = yield* sql<{ seq: number; n: number }>`SELECT seq, octet_length(payload) + octet_length(type) +
            octet_length(source) + COALESCE(octet_length(source_label), 0) + COALESCE(octet_length(group_key), 0) +
            octet_length(task_id) AS n
            FROM events WHERE task_id = ${taskId} ${after} ORDER BY seq ${limit !== undefined ? sql`LIMIT ${limit}` : sql``}`
          limit = eventsWithinBytes(sizes.map((r) => EVENT_SIZE_OVERHEAD + Number(r.n)), page.maxBytes)
          if (limit === 0) return []
          upTo = sql`AND seq <= ${Number(sizes[limit - 1]!.seq)}`
        }
        // One range scan of the (task_id, seq) primary key: a page never reads the rows before it.
        const rows = yield* sql<EventRow>`SELECT * FROM events WHERE task_id = ${taskId} ${after} ${upTo}
          ORDER BY seq ${limit !== undefined ? sql`LIMIT ${limit}` : sql``}`
        return rows.map(eventOfRow) satisfies ReadonlyArray<TaskEvent>
      }).pipe(guard("listEvents"))
  }
}
