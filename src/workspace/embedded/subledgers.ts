/** The embedded store's subledger rows: direct rejects and cell edits, by the ledgers' rules, on the row's task timeline. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Scalar } from "../../api/resources.js"
import type { WorkspaceClientService } from "../../upstream/WorkspaceClient.js"
import { decideEdit, decideReject } from "../../domain/ledgers.js"
import { nowIso, rowFields, staleRow, type SubledgerRow, toJson } from "./db.js"
import { audit } from "../../domain/engine.js"
import { attributionNow } from "../../services/Actor.js"
import { appendToTimeline } from "./timeline.js"
import { writeFingerprint } from "../../domain/idempotency.js"
import { type Transactions, fromDecision } from "./transaction.js"

export const subledgerRecords = (tx: Transactions): Pick<WorkspaceClientService, "rejectRow" | "updateRow"> => {
  const { sql, guard, rowOf, write, idempotent } = tx
  /** A direct row change on the timeline of the row's task (none for a row of no task). */
  const auditRow = (tenantId: string, row: SubledgerRow, event: ReturnType<typeof audit.rowRejected>) =>
    row.task_id === null ? Effect.void : appendToTimeline(sql, tenantId, row.task_id, [event], nowIso())

  /**
   * The row, read with its task locked (PostgreSQL; SQLite's writes are serial already): a row
   * action recorded by another replica meanwhile is then committed and seen as pending, or waits.
   */
  const lockedRow = (tenantId: string, ledger: string, rowId: string) =>
    Effect.flatMap(rowOf(tenantId, ledger, rowId), (row) =>
      row.task_id === null ? Effect.succeed(row) : sql.onDialectOrElse({
        // Read again once locked: what another replica committed meanwhile.
        pg: () => Effect.andThen(tx.lockTask(row.task_id!), rowOf(tenantId, ledger, rowId)),
        orElse: () => Effect.succeed(row)
      }))

  const rejectRowTx = (tenantId: string, ledger: string, rowId: string) =>
    Effect.gen(function*() {
      const who = yield* attributionNow
      const row = yield* lockedRow(tenantId, ledger, rowId)
      yield* tx.noRowActionPending(row)
      const newStatus = yield* fromDecision(decideReject(ledger, row.status), `Row ${rowId} in ${ledger}`)
      // Compare-and-set on the status read: a row another replica changed meanwhile is read again.
      const updated = yield* sql`UPDATE subledger_rows SET status = ${newStatus}
        WHERE ledger = ${ledger} AND id = ${rowId} AND status = ${row.status} RETURNING id`
      if (updated.length === 0) return yield* Effect.fail(staleRow(`Row ${rowId} in ${ledger}`))
      yield* auditRow(tenantId, row, audit.rowRejected(row, row.status, newStatus, "direct", who))
      return { status: "OK" as const, rowId, newStatus }
    })

  const updateRowTx = (tenantId: string, ledger: string, rowId: string, field: string, value: Scalar, expected: Option.Option<Scalar>) =>
    Effect.gen(function*() {
      const who = yield* attributionNow
      const row = yield* lockedRow(tenantId, ledger, rowId)
      yield* tx.noRowActionPending(row)
      const coerced = yield* fromDecision(decideEdit(ledger, row.status, field, value), `Row ${rowId} in ${ledger}`)
      const before = rowFields(row)
      if (Option.isSome(expected)) yield* tx.checkExpected(row, field, expected.value)
      const fields = { ...before, [field]: coerced }
      const updated = yield* sql`UPDATE subledger_rows SET fields = ${toJson(fields)}
        WHERE ledger = ${ledger} AND id = ${rowId} AND status = ${row.status} AND fields = ${row.fields} RETURNING id`
      if (updated.length === 0) return yield* Effect.fail(staleRow(`Row ${rowId} in ${ledger}`))
      yield* auditRow(tenantId, row, audit.cellEdited(row, field, before[field], coerced, "direct", who))
      return { status: "OK" as const, rowId, field, value: coerced }
    })

  return {
    rejectRow: (tenantId, ledger, rowId) =>
      write(idempotent(tenantId, writeFingerprint.rejectRow(ledger, rowId), rejectRowTx(tenantId, ledger, rowId))).pipe(
        guard("rejectRow")
      ),

    updateRow: (tenantId, ledger, rowId, field, value, expected = Option.none()) =>
      write(
        idempotent(
          tenantId,
          writeFingerprint.updateRow(ledger, rowId, field, value, Option.isSome(expected) ? { value: expected.value } : undefined),
          updateRowTx(tenantId, ledger, rowId, field, value, expected)
        )
      ).pipe(guard("updateRow"))
  }
}
