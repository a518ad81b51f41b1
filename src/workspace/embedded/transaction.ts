/**
 * What every kind of record of the embedded store shares (./store.ts puts them together): the
 * SQL client, the outbox, the busy-timeout guard, and the helpers a write runs with. Lookups of a
 * tenant's task, workflow and row; the task lock; the engine's acceptance of a signal; writes in
 * a transaction, idempotent ones, and those whose signals the outbox delivers after the commit.
 */
import * as SqlClient from "effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { BadRequest, Conflict, GatewayTimeout, NotFound } from "../../api/errors.js"
import type { Scalar } from "../../api/resources.js"
import { rootTaskId } from "../../api/ids.js"
import { currentDeadline } from "../../services/Deadline.js"
import { TaskEventBell } from "../../services/TaskEventBell.js"
import { currentIdempotencyKey } from "../../upstream/WorkspaceClient.js"
import type { RowDecision } from "../../domain/ledgers.js"
import type { Workspace } from "../../upstream/model.js"
import {
  BusyTimeout,
  claimOfRow,
  fromJson,
  guardFor,
  rowFields,
  runbookFromJson,
  stepHistoryOf,
  type SubledgerRow,
  type TaskRow,
  toJson,
  yieldToEventLoop
} from "./db.js"
import {
  acceptSignal,
  applyToRow,
  cellMoved,
  isRowAction,
  lastEditorOf,
  type PendingStepSignal,
  refusalOf,
  rowActionOf,
  type RowState
} from "../../domain/engine.js"
import { ROW_ACTION_SIGNAL } from "../../api/stepSignals.js"
import { attributionNow, type Attribution } from "../../services/Actor.js"
import { callerFingerprint, decodeResult, encodeResult, IDEMPOTENCY_TTL_MS, keyReused, sameRequest } from "../../domain/idempotency.js"
import { makeOutbox, type NewSignal, type RelayOptions } from "./outbox.js"
import { asTimelineWriter } from "./timeline.js"
import { preciseNowMs } from "../../lib/preciseClock.js"
import { acceptedSoFar } from "../../lib/acceptedConnections.js"

/**
 * How close after one another two step-bound requests count as written together (letArrivalsIn).
 * One process (SQLite) reads every socket on one event loop: 3 ms covers a client writing 20
 * requests. Replicas (PostgreSQL) each read their own: two processes handed one write each at
 * the same moment stamped it 0.1 ms apart at the median but 12-90 ms apart at p99.9 (max 170-580)
 * while the test suite loaded this 2-core machine (bench/experiments/arrival-skew.ts), and a
 * replica that read its share 10 ms late bound a twentieth approval to the next step.
 */
const SETTLE_MS = 3
const REPLICA_SETTLE_MS = 100
// SVC_DECISION_SETTLE_MS overrides either (declared in src/config/settings.ts without a default).

/**
 * How long a step-bound write waits after its arrival for the connections being accepted
 * (letArrivalsIn), at most: the replicas' settle time, and at least QUIET_MIN_TURNS turns, so
 * that a process the machine left waiting (no turns while the time passes) still takes in that
 * many connections, one a turn. Under a steady stream of new connections (about 5,600 a second)
 * every decision waits it: 110 ms at p50 (125 ms on the build before, from the load alone); past
 * it, a decision that does not name its step may be read after the move.
 */
const QUIET_MAX_MS = 100
const QUIET_MIN_TURNS = 64

/**
 * Turns of the event loop until two pass in which this process accepted no connection, or until
 * `untilMs` (wall clock) once QUIET_MIN_TURNS have passed, or the request's deadline: requests on
 * connections accepted meanwhile are read and stamped first.
 */
const quietTurns = (untilMs: number, deadlineMs: number): Effect.Effect<void> =>
  Effect.suspend(() => {
    let seen = acceptedSoFar()
    let quiet = 0
    let turns = 0
    const turn: Effect.Effect<void> = Effect.flatMap(yieldToEventLoop, () => {
      turns++
      const now = acceptedSoFar()
      if (now === seen) quiet++
      else {
        seen = now
        quiet = 0
      }
      const at = preciseNowMs()
      return quiet >= 2 || at >= deadlineMs || (turns >= QUIET_MIN_TURNS && at >= untilMs) ? Effect.void : turn
    })
    return turn
  })

export const notFound = (what: string) => Effect.fail(new NotFound({ message: `${what} not found` }))

export const fromDecision = <A>(d: RowDecision<A>, what: string): Effect.Effect<A, NotFound | BadRequest> =>
  d._tag === "ok"
    ? Effect.succeed(d.value)
    : d._tag === "notFound"
    ? notFound(what)
    : Effect.fail(
      new BadRequest({
        message: d.message,
        ...(d.currentStatus !== undefined ? { currentStatus: d.currentStatus } : {}),
        ...(d.code !== undefined ? { code: d.code } : {})
      })
    )

/** The shared SQL client, outbox and transaction helpers of one embedded store. */
export const makeTransactions = (relay: RelayOptions | undefined, settleMs?: number | undefined) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* makeOutbox(relay)
    // Every operation waits at most this long for another process's lock, then answers 503.
    const guard = guardFor(yield* BusyTimeout)
    const bell = yield* TaskEventBell

    /** The root task of `taskId`, when it belongs to the tenant. */
    const taskOf = (tenantId: string, taskId: string) =>
      Effect.flatMap(
        sql<TaskRow>`SELECT * FROM tasks WHERE id = ${rootTaskId(taskId)} AND tenant_id = ${tenantId}`,
        ([row]) => row === undefined ? notFound(`Task ${taskId}`) : Effect.succeed(row)
      )

    const workflowOf = (workflowId: string) =>
      Effect.map(
        sql<{ id: string; name: string; tenant_id: string | null; runbook: string | null }>`
          SELECT id, name, tenant_id, runbook FROM workflows WHERE id = ${workflowId}`,
        (rows) => Option.fromNullishOr(rows[0])
      )

    const runbookOf = (workflowId: string) =>
      Effect.flatMap(workflowOf(workflowId), (wf) => {
        const runbook = Option.isSome(wf) ? runbookFromJson(wf.value.runbook) : null
        return runbook === null ? notFound(`Runbook of workflow ${workflowId}`) : Effect.succeed(runbook)
      })

    const rowOf = (tenantId: string, ledger: string, rowId: string) =>
      Effect.flatMap(
        sql<SubledgerRow>`SELECT * FROM subledger_rows WHERE ledger = ${ledger} AND id = ${rowId} AND tenant_id = ${tenantId}`,
        ([row]) => row === undefined ? notFound(`Row ${rowId} in ${ledger}`) : Effect.succeed(row)
      )

    /**
     * PostgreSQL: locks the task's row for the rest of the write, so decisions on one task taken
     * by several replicas are checked one after the other (SQLite's writes are serial already).
     */
    const lockTask = (taskId: string) =>
      sql.onDialectOrElse({
        pg: () => Effect.asVoid(sql`SELECT id FROM tasks WHERE id = ${rootTaskId(taskId)} FOR UPDATE`),
        orElse: () => Effect.void
      })

    /**
     * Whether the signal's task takes it, by the engine's one rule (../../domain/engine.ts acceptSignal),
     * inside the write's transaction with the task locked: bound to the step current when its
     * request arrived. Fails with what the caller must hear; succeeds with the signal to record
     * (bound and attributed), or undefined for a duplicate (a no-op that succeeds).
     *
     * A request's arrival is stamped as Node reads it (src/http/server/arrival.ts), but the SQLite driver
     * is synchronous and fibers resume on microtasks: without a break, one request can be read,
     * decided and applied before the event loop even reads a second one written at the same moment
     * on another connection, which is then stamped after the task moved (`letArrivalsIn`).
     */
    const accept = (tenantId: string, signal: Workspace.Signal, who: Attribution) =>
      Effect.gen(function*() {
        yield* lockTask(signal.taskId)
        const task = yield* taskOf(tenantId, signal.taskId)
        const pending = yield* pendingStepSignals(task.id)
        const accepted = acceptSignal(
          { status: task.status, currentStep: task.current_step },
          fromJson(task.snapshots),
          signal,
          pending,
          {
            arrivedAt: who.arrivedAt,
            actor: who.actor,
            groups: who.groups,
            enforced: who.enforced,
            claim: claimOfRow(task),
            history: stepHistoryOf(task.step_history),
            runbook: yield* Effect.orElseSucceed(runbookOf(task.workflow_id), () => null)
          }
        )
        const refused = refusalOf(accepted)
        if (refused !== undefined) return yield* Effect.fail(refused)
        return accepted._tag === "record" ? { task, expectedStep: accepted.expectedStep } : undefined
      })

    const signalFor = (
      tenantId: string,
      bound: { readonly task: TaskRow; readonly expectedStep: string | null },
      signal: Workspace.Signal,
      who: Attribution
    ): NewSignal => ({
      tenantId,
      rootTaskId: bound.task.id,
      signal,
      expectedStep: bound.expectedStep,
      actor: who.actor ?? null,
      requestId: who.requestId ?? null
    })

    /**
     * Before a step-bound write of a request: until the settle time after its arrival, then turns
     * of the event loop until two pass in which no connection was accepted (`quietTurns`), so that
     * every request that reached the sockets within it of this one is read and stamped before this
     * one can move the task on (replicas: every request another replica stamped within it).
     * - The turns: one runs in the check phase of the same loop iteration, before the next poll
     *   (measured on the built process: 2 approvals written together then decided both steps in
     *   about 1 round of 10); two let a poll phase pass. But Node accepts one waiting connection
     *   per turn (../../lib/acceptedConnections.ts): 20 approvals written at once on 20 new
     *   connections were stamped over 15-45 ms, and two turns moved the task two or three steps
     *   in about half the rounds; so the turns go on while connections are being accepted, up to
     *   QUIET_MAX_MS after the arrival (a flood of connections cannot hold a decision longer).
     * - The wait: a client writing 20 requests takes a millisecond or two; a fast server had
     *   applied the first before the last reached its socket (seen in full test runs: 10
     *   approvals and 10 rejections written within 2 ms decided two steps). Decisions on one
     *   task this close together are treated as simultaneous; a person's double-click is
     *   further apart and is bound by the step the client names.
     * Outside the transaction: nothing is locked while it waits.
     * Never past the request's deadline (SVC_REQUEST_DEADLINE_MS): a wait that would end after it
     * ends at it with a 504 and nothing recorded, as an HTTP workspace's would (the gateway answered
     * 200 a settle time of 1.5 s after a deadline of 100 ms).
     */
    const ownSettle: number = settleMs ?? sql.onDialectOrElse<number, never, number>({ pg: () => REPLICA_SETTLE_MS, orElse: () => SETTLE_MS })
    // A stamp another process forwarded (gateways in front of the workspace API, each reading its
    // own sockets): those processes are replicas whatever the database.
    const forwardedSettle: number = settleMs ?? REPLICA_SETTLE_MS
    const letArrivalsIn = (who: Attribution) => {
      const arrivedAt = who.arrivedAt
      if (arrivedAt === undefined) return Effect.void
      const settle = who.arrivalForwarded === true ? forwardedSettle : ownSettle
      return Effect.flatMap(currentDeadline, (deadline) => {
        const wait = arrivedAt + settle - preciseNowMs()
        if (wait <= 0) return Effect.void
        if (Option.isSome(deadline) && Date.now() + wait > deadline.value.at) {
          return Effect.andThen(
            Effect.sleep(Math.max(0, deadline.value.at - Date.now())),
            Effect.fail(
              new GatewayTimeout({
                message: `A write bound to a step waits ${settle} ms after its arrival (SVC_DECISION_SETTLE_MS), past ` +
                  `the request's deadline of ${deadline.value.budgetMs} ms: nothing was recorded`
              })
            )
          )
        }
        return Effect.sleep(Math.ceil(wait))
      }).pipe(Effect.andThen(Effect.flatMap(currentDeadline, (deadline) =>
        quietTurns(arrivedAt + QUIET_MAX_MS, Option.isSome(deadline) ? deadline.value.at : Number.POSITIVE_INFINITY)
      )))
    }

    /**
     * Every write runs in a transaction, even a single statement: transactions take the write
     * lock up front on the writer connection (./libsql.ts), so a write never waits for a lock
     * held by this same process.
     */
    const write = <A, E, R>(self: Effect.Effect<A, E, R>) => sql.withTransaction(Effect.andThen(asTimelineWriter(sql), self))

    /**
     * A write and its signals commit together; delivery follows the commit and never fails the
     * write: a few signals are delivered before it answers, more by the relay (./outbox.ts).
     */
    const writeThenDeliver = <A, E, R>(operation: string, self: Effect.Effect<A, E, R>) =>
      write(outbox.collect(self)).pipe(
        guard(operation),
        Effect.flatMap(({ recorded, value }) => Effect.as(outbox.afterCommit(recorded), value))
      )

    /** Decisions and files recorded for the task and not yet applied: they have decided their step already. */
    const pendingStepSignals = (rootTaskId: string) =>
      sql<{ name: string; expected_step: string | null; actor: string | null; created_at: string; payload: string }>`
        SELECT name, expected_step, actor, created_at, payload FROM signals
        WHERE root_task_id = ${rootTaskId} AND delivered_at IS NULL AND (name = 'approve' OR name = 'reject' OR name = 'file_submitted')
        ORDER BY id`.pipe(
        Effect.map((rows) =>
          rows.map((r): PendingStepSignal => ({
            name: r.name,
            expectedStep: r.expected_step,
            actor: r.actor,
            recordedAt: r.created_at,
            // Only a link's decision reads it (engine.ts acceptSignal); its payload is a few keys.
            ...(r.payload.includes('"via"') && fromJson<{ via?: unknown }>(r.payload).via === "link" ? { via: "link" as const } : {})
          }))
        )
      )

    /**
     * Idempotent writes (../../domain/idempotency.ts): run inside the write's transaction, so the key is
     * checked and its result stored atomically with the write; a concurrent retry waits for the
     * write lock and then finds it. Keys older than IDEMPOTENCY_TTL_MS are pruned now and then.
     */
    let prunedAtMs = 0
    const PRUNE_EVERY_MS = 10 * 60_000
    const idempotent = <A, E, R>(tenantId: string, fingerprintOf: Effect.Effect<string>, self: Effect.Effect<A, E, R>) =>
      Effect.flatMap(Effect.service(currentIdempotencyKey), (key) =>
        Option.isNone(key) ? self : Effect.gen(function*() {
          // The key is the caller's: another person sending the same key (a guessed one, or a
          // client that derives keys from the task) must not be answered with this one's result
          // (a decision they may not take told {ok: true}, theirs never made): theirs is a 409.
          // An anonymous caller is one of its own (../../domain/idempotency.ts callerFingerprint).
          const bare = yield* fingerprintOf
          const { actor } = yield* attributionNow
          const fingerprint = callerFingerprint(bare, actor)
          // PostgreSQL: a concurrent retry on another replica waits here, then finds the stored result.
          yield* sql.onDialectOrElse({
            pg: () => Effect.asVoid(sql`SELECT pg_advisory_xact_lock(hashtextextended(${tenantId}::text || ':' || ${key.value}::text, 0))`),
            orElse: () => Effect.void
          })
          const [stored] = yield* sql<{ fingerprint: string; result: string | null }>`
            SELECT fingerprint, result FROM idempotency_keys WHERE tenant_id = ${tenantId} AND key = ${key.value}`
          if (stored !== undefined) {
            return sameRequest(stored.fingerprint, bare, actor) ? decodeResult<A>(stored.result) : yield* Effect.fail(keyReused(key.value))
          }
          const result = yield* self
          const nowMs = Date.now()
          yield* sql`INSERT INTO idempotency_keys ${
            sql.insert({ tenant_id: tenantId, key: key.value, fingerprint, result: encodeResult(result), created_ms: nowMs })
          }`
          if (nowMs - prunedAtMs > PRUNE_EVERY_MS) {
            prunedAtMs = nowMs
            yield* sql`DELETE FROM idempotency_keys WHERE created_ms < ${nowMs - IDEMPOTENCY_TTL_MS}`
          }
          return result
        }))

    /**
     * "No silent overwrite": an edit naming the value its editor saw fails, writing nothing, when
     * the cell holds another now: a Conflict with the current value and who changed it last (the
     * newest row.edited of that cell on the row's task timeline).
     */
    /**
     * The row actions recorded for `row` and not yet applied, in order. Only its own task takes a
     * row action on it (rowActionAllowed), so they are among that task's pending signals (the
     * signals_pending_by_task index); a row of no task has none.
     */
    const pendingRowActions = (row: SubledgerRow) =>
      row.task_id === null ? Effect.succeed([]) : Effect.map(
        sql<{ payload: string }>`SELECT payload FROM signals
          WHERE root_task_id = ${row.task_id} AND delivered_at IS NULL AND name = ${ROW_ACTION_SIGNAL} ORDER BY id`,
        (pending) =>
          pending.flatMap((p) => {
            const payload = fromJson<Record<string, unknown>>(p.payload)
            if (!isRowAction({ name: ROW_ACTION_SIGNAL, payload })) return []
            const action = rowActionOf(payload)
            return action.ledger === row.ledger && action.rowId === row.id ? [action] : []
          })
      )
    /**
     * The row as the row actions recorded for it and not yet applied will leave it, in order: a
     * row action is checked when it is recorded and applied on delivery, so a second one checked
     * against the row as stored passed the same `expected` (or an edit passed beside a reject),
     * answered 200, and was dropped on delivery ("changed since the editor saw it"). For checks
     * only: a write's compare-and-set is on the row as stored.
     */
    const rowAsPending = (row: SubledgerRow) =>
      Effect.map(pendingRowActions(row), (pending): SubledgerRow => {
        let state: RowState = { status: row.status, fields: rowFields(row) }
        let changed = false
        for (const action of pending) {
          const applied = applyToRow(state, action)
          if (applied._tag === "changed") {
            state = applied.row
            changed = true
          }
        }
        return changed ? { ...row, status: state.status, fields: toJson(state.fields) } : row
      })

    /**
     * A direct reject or edit of a row waits for the row actions recorded for it to be applied:
     * written in between, it would change the row under one whose 200 was given (an edit with
     * `expected` is then dropped on delivery, one without overwrites the later direct write). Its
     * 409 says to send it again: they are applied right after their commit, or by the relay.
     */
    const noRowActionPending = (row: SubledgerRow) =>
      Effect.flatMap(pendingRowActions(row), (pending) =>
        pending.length === 0 ? Effect.void : Effect.fail(
          new Conflict({
            message: `Row ${row.id} in ${row.ledger} has ${pending.length === 1 ? "a row action" : `${pending.length} row actions`} ` +
              "still being applied; send the change again"
          })
        ))

    const checkExpected = (row: SubledgerRow, field: string, expected: Scalar) =>
      Effect.gen(function*() {
        const current = rowFields(row)[field]
        if (!cellMoved(current, { expected })) return
        const events = row.task_id === null ? [] : yield* sql<{ type: string; payload: string }>`
          SELECT type, payload FROM events WHERE root_task_id = ${row.task_id} AND type = 'row.edited'
          ORDER BY seq DESC LIMIT 500`
        const changedBy = lastEditorOf(events, row.id, field)
        return yield* Effect.fail(new Conflict({
          message: `Field "${field}" of row ${row.id} is ${JSON.stringify(current ?? null)} now, not ${JSON.stringify(expected)} as the editor saw` +
            (changedBy !== null ? `: ${changedBy} changed it` : ""),
          currentValue: current ?? null,
          changedBy
        }))
      })

    return {
      sql,
      outbox,
      checkExpected,
      rowAsPending,
      noRowActionPending,
      guard,
      bell,
      taskOf,
      workflowOf,
      runbookOf,
      rowOf,
      lockTask,
      accept,
      signalFor,
      letArrivalsIn,
      write,
      writeThenDeliver,
      idempotent
    }
  })

export type Transactions = Effect.Success<ReturnType<typeof makeTransactions>>
