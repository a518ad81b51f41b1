/**
 * The embedded store's task events. A producer's seqs are its own (unique per task and source;
 * a retried post answers the stored event); the gateway's vouched records take no
 * seq (./timeline.ts). Read in the store's order, (tx, position), in pages the store alone cuts.
 */
import * as Effect from "effect/Effect"
import { BadRequest, Conflict } from "../../api/errors.js"
import { eventSourceRefusal } from "../../domain/eventSources.js"
import { quoted } from "../../lib/quoted.js"
import { EVENT_SIZE_OVERHEAD, eventsWithinBytes, positionParts, timelinePage } from "../../api/eventPaging.js"
import type { WorkspaceClientService } from "../../upstream/WorkspaceClient.js"
import { EVENT_COLUMNS, type EventRow, eventOfRow, nowIso, toJson } from "./db.js"
import { sameEvent } from "../../domain/engine.js"
import { writeFingerprint } from "../../domain/idempotency.js"
import { beforePositions, settledEvents } from "./timeline.js"
import type { Transactions } from "./transaction.js"

interface Fields {
  readonly type: string
  readonly source: string
  readonly sourceLabel?: string | undefined
  readonly payload: Record<string, unknown>
  readonly groupKey?: string | undefined
}


/** A 400 naming `source` when a producer's source reads as the gateway's. */
const requireProducerSource = (source: string): Effect.Effect<void, BadRequest> => {
  const refusal = eventSourceRefusal(source)
  return refusal === undefined ? Effect.void : Effect.fail(new BadRequest({ message: refusal }))
}

export const eventRecords = (tx: Transactions): Pick<WorkspaceClientService, "appendEvent" | "recordEvent" | "listEvents"> => {
  const { sql, guard, bell, taskOf, write, idempotent } = tx
  const cols = sql.unsafe(EVENT_COLUMNS)

  /**
   * An event of a source with seqs (a producer's, an agent's own) at `seq`, or at the next of its
   * source when undefined (PostgreSQL: those of one source take turns; nothing else waits on
   * that lock, and the task's row is not locked). A taken seq is the same event again (answered
   * with the stored one) or a 409; any free seq is stored, a late lower one too (a retry after a
   * gap): readers follow positions, so it is read once, after what they had.
   */
  const appendToSource = (tenantId: string, taskId: string, fields: Fields, origin: "producer" | "agent", seq: number | undefined) =>
    Effect.gen(function*() {
      const task = yield* taskOf(tenantId, taskId)
      const payload = toJson(fields.payload)
      let at = seq
      if (at === undefined) {
        yield* sql.onDialectOrElse({
          pg: () => Effect.asVoid(sql`SELECT pg_advisory_xact_lock(hashtextextended(${taskId}::text || ':' || ${fields.source}::text, 1))`),
          orElse: () => Effect.void
        })
        const [top] = yield* sql<{ m: number | string | null }>`
          SELECT MAX(seq) AS m FROM events WHERE task_id = ${taskId} AND source = ${fields.source} AND seq IS NOT NULL`
        at = top?.m == null ? 0 : Number(top.m) + 1
      }
      yield* beforePositions(sql)
      const [inserted] = yield* sql<EventRow>`INSERT INTO events ${
        sql.insert({
          task_id: taskId,
          seq: at,
          origin,
          tenant_id: tenantId,
          root_task_id: task.id,
          type: fields.type,
          source: fields.source,
          source_label: fields.sourceLabel ?? null,
          payload,
          group_key: fields.groupKey ?? null,
          created_at: nowIso()
        })
      } ON CONFLICT (task_id, source, seq) WHERE seq IS NOT NULL DO NOTHING RETURNING ${cols}`
      if (inserted !== undefined) return eventOfRow(inserted)
      const [existing] = yield* sql<EventRow>`SELECT ${cols} FROM events
        WHERE task_id = ${taskId} AND source = ${fields.source} AND seq = ${at}`
      // A retried post gets the stored event; anything else at a taken seq is a 409.
      return existing !== undefined && sameEvent(
          { type: existing.type, source: existing.source, sourceLabel: existing.source_label, groupKey: existing.group_key, payload: existing.payload },
          { ...fields, payload }
        )
        ? eventOfRow(existing)
        : yield* Effect.fail(new Conflict({ message: `seq ${at} of source ${quoted(fields.source)} is already taken by a different event` }))
    })

  /** The gateway's own record: marked as such, read with seq = position. */
  const appendRecord = (tenantId: string, taskId: string, fields: Fields) =>
    Effect.gen(function*() {
      const task = yield* taskOf(tenantId, taskId)
      yield* beforePositions(sql)
      const [inserted] = yield* sql<EventRow>`INSERT INTO events ${
        sql.insert({
          task_id: taskId,
          seq: null,
          origin: "gateway",
          tenant_id: tenantId,
          root_task_id: task.id,
          type: fields.type,
          source: fields.source,
          source_label: fields.sourceLabel ?? null,
          payload: toJson(fields.payload),
          group_key: fields.groupKey ?? null,
          created_at: nowIso()
        })
      } RETURNING ${cols}`
      return eventOfRow(inserted!)
    })

  /**
   * Rows a reader may take: on PostgreSQL only those of transactions older than every one still
   * running, so that no later commit lands behind a reader's cursor (ordered by transaction first).
   */
  const settled = settledEvents(sql)
  const afterPosition = (after: string | undefined) => {
    if (after === undefined) return sql``
    const { tx: t, n } = positionParts(after)
    return sql.onDialectOrElse({
      pg: () => sql`AND (tx, position) > (${t}::xid8, ${n})`,
      orElse: () => sql`AND (tx, position) > (${Number(t)}, ${n})`
    })
  }

  /**
   * A cursor past every position this store has given out would hide the events written after
   * it (each is read only after its cursor): a 400 naming `after`, not an empty answer. Asked
   * only when a read after it found nothing (one with events after it is before one of them).
   * SQLite: positions are plain digits (tx 0), so one with a transaction is past them all, and so
   * is a number past the last. PostgreSQL: ordered by transaction first, every later writer's
   * transaction is at least the snapshot's xmax; a cursor of a transaction before that is passed
   * by them, whatever its number (plain digits come before every transaction).
   */
  const refusePastTheEnd = (after: string | undefined) => {
    if (after === undefined) return Effect.void
    const { tx: t, n } = positionParts(after)
    const past = (why: string) =>
      Effect.fail(new BadRequest({ message: `after: ${quoted(after)} is past every position this store has given out (${why}): no later event would follow it` }))
    return sql.onDialectOrElse({
      pg: () =>
        Effect.flatMap(
          sql<{ begun: boolean }>`SELECT ${t}::xid8 < pg_snapshot_xmax(pg_current_snapshot()) AS begun`,
          ([row]) => row?.begun === true ? Effect.void : past(`transaction ${t} has not begun`)
        ),
      orElse: () =>
        t !== "0"
          ? past("its positions are plain digits")
          : Effect.flatMap(
            sql<{ last: number | string | null }>`SELECT MAX(position) AS last FROM events`,
            ([row]) => n <= Number(row?.last ?? 0) ? Effect.void : past("its last is lower")
          )
    })
  }

  return {
    appendEvent: (tenantId, taskId, dto) =>
      Effect.andThen(requireProducerSource(dto.source), write(idempotent(tenantId, writeFingerprint.appendEvent(taskId, dto), appendToSource(tenantId, taskId, dto, "producer", dto.seq)))
        .pipe(guard("appendEvent"), Effect.tap(() => Effect.sync(() => bell.ring(taskId))))),

    recordEvent: (tenantId, taskId, record) =>
      write(idempotent(
        tenantId,
        writeFingerprint.recordEvent(taskId, record),
        record.origin === "gateway"
          ? appendRecord(tenantId, taskId, record)
          : appendToSource(tenantId, taskId, record, "agent", record.seq)
      )).pipe(guard("recordEvent"), Effect.tap(() => Effect.sync(() => bell.ring(taskId)))),

    listEvents: (tenantId, taskId, page = {}) =>
      Effect.gen(function*() {
        yield* taskOf(tenantId, taskId)
        const after = afterPosition(page.after)
        // One more than asked: whether more follows is known, not guessed.
        const ask = page.limit !== undefined ? sql`LIMIT ${page.limit + 1}` : sql``
        if (page.maxBytes === undefined) {
          const rows = yield* sql<EventRow>`SELECT ${cols} FROM events WHERE task_id = ${taskId} ${after} ${settled}
            ORDER BY events.tx, events.position ${ask}`
          if (rows.length === 0) yield* refusePastTheEnd(page.after)
          const more = page.limit !== undefined && rows.length > page.limit
          return timelinePage((more ? rows.slice(0, page.limit) : rows).map(eventOfRow), more)
        }
        // Sizes first (small rows), so a page of large events is never read whole to be cut;
        // octet_length counts the UTF-8 bytes eventSize counts (../../api/eventPaging.ts).
        const sizes = yield* sql<{ tx: number | string; position: number | string; n: number }>`SELECT CAST(tx AS TEXT) AS tx, position,
          octet_length(payload) + octet_length(type) + octet_length(source) + COALESCE(octet_length(source_label), 0) +
          COALESCE(octet_length(group_key), 0) + octet_length(task_id) AS n
          FROM events WHERE task_id = ${taskId} ${after} ${settled} ORDER BY events.tx, events.position ${ask}`
        const wanted = page.limit !== undefined ? Math.min(page.limit, sizes.length) : sizes.length
        const n = eventsWithinBytes(sizes.slice(0, wanted).map((r) => EVENT_SIZE_OVERHEAD + Number(r.n)), page.maxBytes)
        if (n === 0) {
          yield* refusePastTheEnd(page.after)
          return timelinePage([], false)
        }
        const last = sizes[n - 1]!
        // The rows of the sizes read: between the cursor and the last one taken, in the same order.
        const upTo = sql.onDialectOrElse({
          pg: () => sql`AND (tx, position) <= (${String(last.tx)}::xid8, ${Number(last.position)})`,
          orElse: () => sql`AND (tx, position) <= (${Number(last.tx)}, ${Number(last.position)})`
        })
        const rows = yield* sql<EventRow>`SELECT ${cols} FROM events WHERE task_id = ${taskId} ${after} ${upTo} ${settled}
          ORDER BY events.tx, events.position`
        return timelinePage(rows.map(eventOfRow), sizes.length > n)
      }).pipe(guard("listEvents"))
  }
}
