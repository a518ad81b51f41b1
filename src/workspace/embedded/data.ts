/** The embedded store's data records: a batch stored a group at a time, one signal per record. */
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { timeOrderedUuid } from "../../lib/timeOrderedId.js"
import type { WorkspaceClientService } from "../../upstream/WorkspaceClient.js"
import { nowIso, yieldToEventLoop } from "./db.js"
import { audit } from "../../domain/engine.js"
import { attributionNow } from "../../services/Actor.js"
import { appendToTimeline } from "./timeline.js"
import { writeFingerprint } from "../../domain/idempotency.js"
import type { Transactions } from "./transaction.js"
import { nextGroup } from "./insertGroups.js"
import { requireSignalName } from "../../services/signals.js"

/** Signals per outbox insert (small rows: the bound-parameter limit and a short statement). */
const SIGNAL_GROUP = 250

export const dataRecords = (tx: Transactions): Pick<WorkspaceClientService, "ingestData"> => {
  const { sql, outbox, taskOf, accept, signalFor, letArrivalsIn, writeThenDeliver, idempotent } = tx
  return {
    ingestData: (tenantId, batch, signal) =>
      Effect.andThen(requireSignalName(Option.getOrUndefined(signal)?.name), Effect.flatMap(attributionNow, (who) =>
      Effect.andThen(Option.isSome(signal) ? letArrivalsIn(who) : Effect.void, writeThenDeliver(
        "ingestData",
        idempotent(tenantId, writeFingerprint.ingestData(batch, Option.getOrNull(signal)), Effect.gen(function*() {
          const task = yield* taskOf(tenantId, batch.taskId)
          const bound = Option.isSome(signal) ? yield* accept(tenantId, { ...signal.value, payload: {} }, who) : undefined
          const createdAt = nowIso()
          const ids = batch.rows.map(() => timeOrderedUuid())
          // A group at a time (./insertGroups.ts), serialized just before its insert; each insert
          // runs synchronously in the driver, so the event loop gets a turn between groups (other
          // requests go on).
          for (let start = 0; start < ids.length;) {
            if (start > 0) yield* yieldToEventLoop
            const texts = nextGroup(batch.rows, start)
            const group = texts.map((t, i) => ({
              id: ids[start + i]!,
              tenant_id: tenantId,
              task_id: batch.taskId,
              root_task_id: task.id,
              kind: batch.kind ?? null,
              data: t.data,
              source_ref: t.sourceRef,
              created_at: createdAt
            }))
            start += texts.length
            // Never empty (a group takes at least one row); the guard tells the insert helper so.
            if (Arr.isArrayNonEmpty(group)) yield* sql`INSERT INTO data_records ${sql.insert(group)}`
          }
          yield* appendToTimeline(sql, tenantId, task.id, [
            audit.dataIngested(batch.taskId, batch.kind ?? null, ids, Option.isSome(signal) ? signal.value.name : null, who)
          ], createdAt)
          if (Option.isSome(signal) && bound !== undefined) {
            for (let start = 0; start < ids.length; start += SIGNAL_GROUP) {
              yield* yieldToEventLoop
              yield* outbox.record(ids.slice(start, start + SIGNAL_GROUP).map((rowId) =>
                signalFor(tenantId, bound, {
                  ...signal.value,
                  payload: { rowId, kind: batch.kind ?? null, taskId: batch.taskId }
                }, who)
              ))
            }
          }
          return ids.map((id) => ({ id, signaled: Option.isSome(signal) }))
        }))
      ))))
  }
}
