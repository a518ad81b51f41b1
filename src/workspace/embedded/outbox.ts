/**
 * The transactional outbox: writes insert their signals in their own transaction (`record`),
 * and delivery runs the runbook engine on each pending signal afterwards.
 *
 * Delivery of one signal is one transaction that applies the engine's change and marks the
 * signal delivered, so a signal takes effect exactly once even when two processes share the
 * database. A failed delivery (the database refused the write) stays pending with attempts,
 * last_error and a backoff; the next write, the background retry fiber or the next start
 * delivers it. Signals are delivered in id order, and a task whose earlier signal is still
 * pending gets none of its later ones in that pass, so a task sees its signals in order.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type { Workspace } from "../model.js"
import { describeError, fromJson, nowIso, retryBusy, rowFields, runbookFromJson, type SubledgerRow, type TaskRow, taskOfRow, toJson } from "./db.js"
import { applyToRow, applyToTask, isRowAction, rowActionOf } from "../engine.js"

export interface NewSignal {
  readonly tenantId: string
  readonly rootTaskId: string
  readonly signal: Workspace.Signal
  /** The task's current step when the signal was accepted. */
  readonly expectedStep: string | null
}

export interface SignalRow {
  readonly id: number
  readonly tenant_id: string
  readonly root_task_id: string
  readonly task_id: string
  readonly name: string
  readonly payload: string
  readonly expected_step: string | null
  readonly attempts: number
  readonly next_attempt_ms: number | null
}

export interface DeliveryReport {
  readonly delivered: number
  readonly failed: number
  /** Left for later: in backoff, or behind an undelivered signal of the same task. */
  readonly deferred: number
}

/** Backoff after the n-th failed attempt: 1 s doubling, at most 5 minutes. */
export const retryDelayMs = (attempts: number) => Math.min(1000 * 2 ** Math.max(0, attempts - 1), 5 * 60_000)

export const makeOutbox = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // One delivery pass at a time in this process; other processes are fenced by the per-signal transaction.
  const lock = yield* Effect.makeSemaphore(1)

  /** Inserts signals; call inside the transaction of the write they follow. */
  const record = (signals: ReadonlyArray<NewSignal>) =>
    signals.length === 0 ? Effect.void : sql`INSERT INTO signals ${
      sql.insert(signals.map((s) => ({
        tenant_id: s.tenantId,
        root_task_id: s.rootTaskId,
        task_id: s.signal.taskId,
        name: s.signal.name,
        payload: toJson(s.signal.payload),
        expected_step: s.expectedStep,
        created_at: nowIso()
      })))
    }`.pipe(Effect.asVoid)

  const applyTaskSignal = (s: SignalRow, payload: Record<string, unknown>, now: string) =>
    Effect.gen(function*() {
      const [row] = yield* sql<TaskRow>`SELECT * FROM tasks WHERE id = ${s.root_task_id}`
      if (row === undefined) return `ignored: task ${s.root_task_id} not found`
      const [wf] = yield* sql<{ runbook: string | null }>`SELECT runbook FROM workflows WHERE id = ${row.workflow_id}`
      const outcome = applyToTask(
        taskOfRow(row),
        runbookFromJson(wf?.runbook ?? null),
        fromJson(row.snapshots),
        { name: s.name, payload, expectedStep: s.expected_step },
        now
      )
      if (outcome._tag === "ignored") return `ignored: ${outcome.reason}`
      yield* sql`UPDATE tasks SET status = ${outcome.status}, current_step = ${outcome.currentStep},
        snapshots = ${toJson(outcome.snapshots)} WHERE id = ${row.id}`
      return "applied"
    })

  const applyRowAction = (s: SignalRow, payload: Record<string, unknown>) =>
    Effect.gen(function*() {
      const action = rowActionOf(payload)
      const [row] = yield* sql<SubledgerRow>`SELECT * FROM subledger_rows
        WHERE ledger = ${String(action.ledger)} AND id = ${String(action.rowId)} AND tenant_id = ${s.tenant_id}`
      if (row === undefined) return `ignored: row ${action.rowId} not found in ${action.ledger}`
      const outcome = applyToRow({ status: row.status, fields: rowFields(row) }, action)
      if (outcome._tag === "ignored") return `ignored: ${outcome.reason}`
      yield* sql`UPDATE subledger_rows SET status = ${outcome.row.status}, fields = ${toJson(outcome.row.fields)}
        WHERE ledger = ${row.ledger} AND id = ${row.id}`
      return "applied"
    })

  /** Applies one signal and marks it delivered, atomically; false when it failed. */
  const deliverOne = (s: SignalRow): Effect.Effect<boolean> =>
    sql.withTransaction(Effect.gen(function*() {
      const [current] = yield* sql<{ delivered_at: string | null }>`SELECT delivered_at FROM signals WHERE id = ${s.id}`
      if (current === undefined || current.delivered_at !== null) return // another process delivered it
      const now = nowIso()
      const payload = fromJson<Record<string, unknown>>(s.payload)
      const outcome = isRowAction({ name: s.name, payload })
        ? yield* applyRowAction(s, payload)
        : yield* applyTaskSignal(s, payload, now)
      yield* sql`UPDATE signals SET delivered_at = ${now}, outcome = ${outcome}, attempts = attempts + 1,
        next_attempt_ms = NULL WHERE id = ${s.id}`
    })).pipe(
      retryBusy,
      Effect.as(true),
      Effect.catchAllCause((cause) => {
        if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
        const attempts = s.attempts + 1
        const message = describeError(Cause.squash(cause)).slice(0, 2000)
        return Effect.logWarning(`signal ${s.id} (${s.name} on task ${s.task_id}) delivery attempt ${attempts} failed: ${message}`).pipe(
          Effect.zipRight(sql.withTransaction(
            sql`UPDATE signals SET attempts = ${attempts}, last_error = ${message},
              next_attempt_ms = ${Date.now() + retryDelayMs(attempts)} WHERE id = ${s.id}`
          )),
          retryBusy,
          Effect.catchAllCause((c) => Effect.logError(`signal ${s.id}: could not record the failed attempt`, c)),
          Effect.as(false)
        )
      })
    )

  /**
   * Delivers every pending signal, oldest first. `force` ignores backoff (used at start,
   * where a restart may well be what fixed the failure). Never fails: problems are logged.
   */
  const deliverPending = (options?: { readonly force?: boolean }): Effect.Effect<DeliveryReport> =>
    lock.withPermits(1)(Effect.gen(function*() {
      const pending = yield* retryBusy(sql<SignalRow>`
        SELECT id, tenant_id, root_task_id, task_id, name, payload, expected_step, attempts, next_attempt_ms
        FROM signals WHERE delivered_at IS NULL ORDER BY id`)
      const blocked = new Set<string>()
      const nowMs = Date.now()
      let delivered = 0
      let failed = 0
      let deferred = 0
      for (const s of pending) {
        const waiting = options?.force !== true && s.next_attempt_ms !== null && Number(s.next_attempt_ms) > nowMs
        if (blocked.has(s.root_task_id) || waiting) {
          blocked.add(s.root_task_id)
          deferred++
          continue
        }
        if (yield* deliverOne({ ...s, attempts: Number(s.attempts) })) delivered++
        else {
          failed++
          blocked.add(s.root_task_id)
        }
      }
      return { delivered, failed, deferred }
    })).pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.interrupt
          : Effect.as(Effect.logError("workspace outbox: delivery pass failed", cause), { delivered: 0, failed: 0, deferred: 0 })
      )
    )

  return { record, deliverPending }
})
