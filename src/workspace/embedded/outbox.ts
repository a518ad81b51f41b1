/**
 * The transactional outbox and its relay: a write inserts its signals in its own transaction
 * (`record`), and the runbook engine applies them afterwards, off the request path, each exactly
 * once and in order per task, also across processes and PostgreSQL replicas sharing the
 * database. How, on `makeOutbox`.
 */
import * as SqlClient from "effect/sql/SqlClient"
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import type * as PgClient from "@effect/sql-pg/PgClient"
import { randomUUID } from "node:crypto"
import { hostname } from "node:os"
import type { Workspace } from "../../upstream/model.js"
import {
  describeError,
  fromJson,
  isBusy,
  BusyTimeout,
  staleRow,
  nowIso,
  retryBusyFor,
  rowFields,
  runbookFromJson,
  stepHistoryOf,
  type SubledgerRow,
  type TaskRow,
  taskOfRow,
  toJson,
  yieldToEventLoop
} from "./db.js"
import { TaskEventBell } from "../../services/TaskEventBell.js"
import {
  advanceHistory,
  applyToRow,
  applyToTask,
  type EngineEvent,
  engineEventsOf,
  isRowAction,
  type PendingSignal,
  rowActionEvent,
  rowActionOf,
  type StepHistory,
  waitingEvent
} from "../../domain/engine.js"
import { preciseNowMs } from "../../lib/preciseClock.js"
import { appendToTimeline, asTimelineWriter } from "./timeline.js"
import { defaultOf } from "../../config/settings.js"

/**
 * @effect/sql-pg's PgClient service by its key (the library's own), so that a SQLite process
 * does not load the PostgreSQL driver just to learn it has no PgClient (./pgUrl.ts).
 */
const PgClientTag = Context.Service<PgClient.PgClient>("@effect/sql-pg/PgClient")

export interface NewSignal {
  readonly tenantId: string
  readonly rootTaskId: string
  readonly signal: Workspace.Signal
  /** The step the signal was accepted for (../../domain/engine.ts acceptSignal). */
  readonly expectedStep: string | null
  /** Who sent it and in which request: its delivery writes them into the snapshot and timeline. */
  readonly actor: string | null
  readonly requestId: string | null
}

export interface SignalRow {
  readonly id: number
  readonly tenant_id: string
  readonly root_task_id: string
  readonly task_id: string
  readonly name: string
  readonly payload: string
  readonly expected_step: string | null
  readonly actor: string | null
  readonly request_id: string | null
  readonly attempts: number
  readonly next_attempt_ms: number | null
}

export interface DeliveryReport {
  readonly delivered: number
  readonly failed: number
  /** Left for later: in backoff, or behind an undelivered signal of the same task. */
  readonly deferred: number
}

export interface RelayOptions {
  /** Signals applied per transaction (one task's, in order); default 200 (SVC_SIGNAL_BATCH_SIZE). */
  readonly batchSize?: number | undefined
  /** Tasks the relay delivers to at once; default 4 (SVC_SIGNAL_CONCURRENCY). */
  readonly concurrency?: number | undefined
  /** A write that recorded at most this many signals delivers them before answering; default 100. */
  readonly awaitMaxSignals?: number | undefined
  /** How long such a write waits for its delivery before answering anyway; default 2 s (SVC_SIGNAL_AWAIT_MS). */
  readonly awaitTimeout?: Duration.Input | undefined
  /** Pause between relay passes while nothing wakes it; default 2 s. */
  readonly pollInterval?: Duration.Input | undefined
  /** PostgreSQL: how long the relay's claim on a task's signals holds; default 30 s (SVC_SIGNAL_LEASE_MS). */
  readonly leaseMs?: number | undefined
}

export const DEFAULT_SIGNAL_BATCH_SIZE = defaultOf("SVC_SIGNAL_BATCH_SIZE")
export const DEFAULT_SIGNAL_CONCURRENCY = defaultOf("SVC_SIGNAL_CONCURRENCY")
export const DEFAULT_SIGNAL_AWAIT_MAX = 100
export const DEFAULT_SIGNAL_AWAIT_MS = defaultOf("SVC_SIGNAL_AWAIT_MS")
export const DEFAULT_SIGNAL_LEASE_MS = defaultOf("SVC_SIGNAL_LEASE_MS")

/** The channel a write's NOTIFY wakes every replica's relay on (PostgreSQL). */
export const SIGNALS_CHANNEL = "workspace_signals"

/** The database clock in ms since the epoch: leases compare against one clock, not each replica's. */
const DB_NOW_MS = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint"

/** Backoff after the n-th failed attempt of a signal: 1 s doubling, at most 5 minutes. */
export const retryDelayMs = (attempts: number) => Math.min(1000 * 2 ** Math.max(0, attempts - 1), 5 * 60_000)

/** Pause after the n-th pass in a row that the database refused: 100 ms doubling, at most 30 s. */
const relayBackoffMs = (failures: number) => Math.min(100 * 2 ** Math.max(0, failures - 1), 30_000)

/** Signals recorded by the write running in this fiber, per root task (see `collect`). */
const recording = Context.Reference<Map<string, number> | undefined>("workspace/embedded/recording", {
  defaultValue: () => undefined
})

type Batch =
  | { readonly _tag: "delivered"; readonly count: number; readonly more: boolean; readonly events: number }
  | { readonly _tag: "empty" }
  | { readonly _tag: "blocked"; readonly pending: number }

interface TaskReport {
  readonly delivered: number
  readonly failed: number
  readonly deferred: number
  /** The database refused (busy past the bound, or unavailable): try the task again later. */
  readonly stalled: boolean
}

/** Batches one task gets per relay pass: a long backlog does not keep other tasks waiting. */
const BATCHES_PER_PASS = 10

const SIGNAL_COLUMNS =
  "id, tenant_id, root_task_id, task_id, name, payload, expected_step, actor, request_id, attempts, next_attempt_ms"

/**
 * Delivery takes a task's oldest pending signals (up to `batchSize`), applies them in id order
 * and marks them delivered, in one transaction that selects them itself. So a signal takes
 * effect exactly once even when two processes share the database (BEGIN IMMEDIATE: one
 * delivers, the other then finds them delivered), and a task sees its signals in order: a
 * signal is never applied while an earlier one of its task is pending. A batch the database
 * refuses is retried one signal at a time; a signal that fails alone stays pending with
 * attempts, last_error and a backoff, and holds back its task's later signals until it goes
 * through.
 *
 * Who delivers:
 * - the relay, a background fiber of the store's scope: one pass over every task with pending
 *   signals, `concurrency` tasks at a time, batch by batch, giving the event loop a turn after
 *   every batch; a write wakes it after its commit, and it looks again every `pollInterval` (signals
 *   in backoff, signals another process recorded). A pass the database refused (busy past the
 *   bound, unavailable) is followed by a growing pause (backoff) instead. The first pass after
 *   start ignores backoff: a restart may well be what fixed the failure.
 * - the write itself, for a few signals (`awaitMaxSignals`; an approval, a file submission):
 *   after its commit it delivers its tasks' pending signals before answering, for at most
 *   `awaitTimeout`, so an approve answered is an approve applied (GET /ui shows the next step).
 *   A bulk data ingest answers at its commit and leaves its signals to the relay.
 *
 * Interrupting a delivery (shutdown) rolls its transaction back: pending signals stay recorded
 * and the next start delivers them.
 *
 * On PostgreSQL several replicas share the outbox; the database keeps each rule:
 * - a delivery transaction first locks its task's row (`SELECT ... FOR UPDATE`), so deliveries
 *   to one task run one at a time across replicas, each reading the signals the previous one
 *   left pending; marking is a compare-and-set on `delivered_at IS NULL`. A replica that dies
 *   mid-delivery loses its connection, PostgreSQL rolls its transaction back and the signals
 *   are still pending: applied exactly once, in order.
 * - the relay claims a task's signals before delivering (`FOR UPDATE SKIP LOCKED`, setting
 *   claimed_by and claimed_until_ms, a lease of `leaseMs`): other replicas' relays leave a task
 *   alone while a live claim covers all its pending signals, and take the signals over once the
 *   lease of a replica that died has run out. The claim spreads the work; correctness does not
 *   rest on it (a write's own delivery after its commit does not claim).
 * - a write that records signals also sends `NOTIFY workspace_signals` (sent at its commit):
 *   every replica's relay listens and wakes up; polling every `pollInterval` stays the fallback.
 */
export const makeOutbox = (options: RelayOptions = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const retryBusy = retryBusyFor(yield* BusyTimeout)
    const bell = yield* TaskEventBell
    const batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_SIGNAL_BATCH_SIZE))
    const concurrency = Math.max(1, Math.floor(options.concurrency ?? DEFAULT_SIGNAL_CONCURRENCY))
    const awaitMax = Math.max(0, Math.floor(options.awaitMaxSignals ?? DEFAULT_SIGNAL_AWAIT_MAX))
    const awaitTimeout = Duration.fromInputUnsafe(options.awaitTimeout ?? Duration.millis(DEFAULT_SIGNAL_AWAIT_MS))
    const pollInterval = Duration.fromInputUnsafe(options.pollInterval ?? Duration.seconds(2))
    // One relay pass at a time in this process; every delivery is fenced by its own transaction anyway.
    const passLock = yield* Semaphore.make(1)
    const wakeUps = yield* Queue.sliding<void>(1)
    const leaseMs = Math.max(1, Math.floor(options.leaseMs ?? DEFAULT_SIGNAL_LEASE_MS))
    /** This process in claimed_by (and in the delivered signals' claimed_by: who applied them). */
    const replicaId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
    const pg = yield* Effect.serviceOption(PgClientTag)
    const onPg = <A, E>(pgForm: () => Effect.Effect<A, E>, orElse: () => Effect.Effect<A, E>) =>
      sql.onDialectOrElse({ pg: pgForm, orElse })

    /** Inserts signals; call inside the transaction of the write they follow. */
    const record = (signals: ReadonlyArray<NewSignal>) =>
      !Arr.isReadonlyArrayNonEmpty(signals) ? Effect.void : Effect.andThen(
        Effect.service(recording).pipe(
          Effect.map((recorded) => {
            if (recorded !== undefined) {
              for (const s of signals) recorded.set(s.rootTaskId, (recorded.get(s.rootTaskId) ?? 0) + 1)
            }
          })
        ),
        sql`INSERT INTO signals ${
          sql.insert(Arr.map(signals, (s) => ({
            tenant_id: s.tenantId,
            root_task_id: s.rootTaskId,
            task_id: s.signal.taskId,
            name: s.signal.name,
            payload: toJson(s.signal.payload),
            expected_step: s.expectedStep,
            actor: s.actor,
            request_id: s.requestId,
            created_at: nowIso()
          })))
        }`.pipe(
          // Sent when the transaction commits (never for a rolled-back one): wakes every replica's relay.
          Effect.andThen(onPg(() => Effect.asVoid(sql`SELECT pg_notify(${SIGNALS_CHANNEL}, '')`), () => Effect.void)),
          Effect.asVoid
        )
      )

    /** Runs a write, noting the signals it records (per root task) for `afterCommit`. */
    const collect = <A, E, R>(self: Effect.Effect<A, E, R>) =>
      Effect.suspend(() => {
        const recorded = new Map<string, number>()
        return Effect.map(Effect.provideService(self, recording, recorded), (value) => ({ value, recorded }))
      })

    /** A row action: applied to its row, with the audit event of what changed (none when ignored). */
    const applyRowAction = (s: SignalRow, signal: PendingSignal) =>
      Effect.gen(function*() {
        const action = rowActionOf(signal.payload)
        const [row] = yield* sql<SubledgerRow>`SELECT * FROM subledger_rows
          WHERE ledger = ${String(action.ledger)} AND id = ${String(action.rowId)} AND tenant_id = ${s.tenant_id}`
        if (row === undefined) return { outcome: `ignored: row ${action.rowId} not found in ${action.ledger}` }
        const before = { status: row.status, fields: rowFields(row) }
        const outcome = applyToRow(before, action)
        if (outcome._tag === "ignored") return { outcome: `ignored: ${outcome.reason}` }
        // Compare-and-set: a row changed since it was read (another replica's edit) is read again.
        const updated = yield* sql`UPDATE subledger_rows SET status = ${outcome.row.status}, fields = ${toJson(outcome.row.fields)}
          WHERE ledger = ${row.ledger} AND id = ${row.id} AND status = ${row.status} AND fields = ${row.fields} RETURNING id`
        if (updated.length === 0) return yield* Effect.fail(staleRow(`Row ${row.id} in ${row.ledger}`))
        return { outcome: "applied", event: rowActionEvent(before, outcome.row, action, signal) }
      })

    /**
     * One transaction: the task's oldest pending signals (at most `limit`, none past one in
     * backoff unless `force`), applied in order, the task written once, the signals marked.
     */
    const deliverBatch = (rootTaskId: string, limit: number, force: boolean): Effect.Effect<Batch, unknown> =>
      sql.withTransaction(Effect.gen(function*() {
        // Before the row lock gives the transaction its id: readers wait for this store's writers only.
        yield* asTimelineWriter(sql)
        // PostgreSQL: deliveries to this task, from any replica, queue here one at a time.
        yield* onPg(() => Effect.asVoid(sql`SELECT id FROM tasks WHERE id = ${rootTaskId} FOR UPDATE`), () => Effect.void)
        const rows = yield* sql<SignalRow>`SELECT ${sql.literal(SIGNAL_COLUMNS)} FROM signals
          WHERE root_task_id = ${rootTaskId} AND delivered_at IS NULL ORDER BY id LIMIT ${limit}`
        if (rows.length === 0) return { _tag: "empty" } as const
        const nowMs = Date.now()
        let ready = 0
        while (
          ready < rows.length &&
          (force || rows[ready]!.next_attempt_ms === null || Number(rows[ready]!.next_attempt_ms) <= nowMs)
        ) ready++
        if (ready === 0) {
          const [n] = yield* sql<{ n: number }>`SELECT COUNT(*) AS n FROM signals
            WHERE root_task_id = ${rootTaskId} AND delivered_at IS NULL`
          return { _tag: "blocked", pending: Number(n?.n ?? rows.length) } as const
        }
        const now = nowIso()
        // The task as the batch changes it, loaded on first need and written back once.
        let state:
          | {
            task: Workspace.Task
            snapshots: Record<string, unknown>
            runbook: Workspace.Runbook | null
            history: StepHistory
          }
          | null
          | undefined
        let dirty = false
        // Whether an applied signal moved the task to another step (or ended it).
        let moved = false
        // A step's `since` is stamped here, as the task is written: the batch's last statement, just
        // before its commit. A request that arrives before it cannot have seen the step; one that
        // arrives between this stamp and the commit (about a round trip) is bound to the new step.
        const flush = Effect.suspend(() => {
          if (!dirty || state == null) return Effect.void
          dirty = false
          const at = preciseNowMs()
          state.history = state.history.map((e) => (Number.isNaN(e.since) ? { step: e.step, since: at } : e))
          // A step that became current waits from now, unclaimed (a claim counts only on its own step).
          const wasMoved = moved
          moved = false
          return wasMoved
            ? sql`UPDATE tasks SET status = ${state.task.status}, current_step = ${state.task.currentStep},
              snapshots = ${toJson(state.snapshots)}, step_history = ${toJson(state.history)},
              waiting_since = ${now}, claim_step = NULL, claimed_by = NULL, claimed_at = NULL, claim_override = 0
              WHERE id = ${state.task.id}`
            : sql`UPDATE tasks SET status = ${state.task.status}, current_step = ${state.task.currentStep},
              snapshots = ${toJson(state.snapshots)}, step_history = ${toJson(state.history)} WHERE id = ${state.task.id}`
        })
        const outcomes = new Map<string, Array<number>>()
        // The task events the applied signals write (../../domain/engine.ts), on the root task's timeline.
        const timeline: Array<EngineEvent & { readonly tenantId: string }> = []
        for (const s of rows.slice(0, ready)) {
          const payload = fromJson<Record<string, unknown>>(s.payload)
          const signal: PendingSignal = {
            name: s.name,
            payload,
            expectedStep: s.expected_step,
            actor: s.actor,
            requestId: s.request_id
          }
          let outcome: string
          if (isRowAction({ name: s.name, payload })) {
            yield* flush
            const applied = yield* applyRowAction(s, signal)
            outcome = applied.outcome
            if (applied.event !== undefined) timeline.push({ ...applied.event, tenantId: s.tenant_id })
          } else {
            if (state === undefined) {
              const [row] = yield* sql<TaskRow>`SELECT * FROM tasks WHERE id = ${rootTaskId}`
              if (row === undefined) state = null
              else {
                const [wf] = yield* sql<{ runbook: string | null }>`SELECT runbook FROM workflows WHERE id = ${row.workflow_id}`
                state = {
                  task: taskOfRow(row),
                  snapshots: fromJson(row.snapshots),
                  runbook: runbookFromJson(wf?.runbook ?? null),
                  history: stepHistoryOf(row.step_history)
                }
              }
            }
            if (state === null) outcome = `ignored: task ${rootTaskId} not found`
            else {
              const applied = applyToTask(state.task, state.runbook, state.snapshots, signal, now)
              if (applied._tag === "ignored") outcome = `ignored: ${applied.reason}`
              else {
                for (const e of engineEventsOf(state.task, signal, applied)) {
                  timeline.push({ ...e, tenantId: s.tenant_id })
                }
                if (applied.currentStep !== state.task.currentStep) {
                  moved = true
                  const waiting = waitingEvent(state.runbook, applied.currentStep, now)
                  if (waiting !== undefined) timeline.push({ ...waiting, tenantId: s.tenant_id })
                }
                // When the next step became current: decisions that arrived before it were for this one.
                state.history = advanceHistory(state.history, state.task.currentStep, applied.currentStep, Number.NaN)
                state.task = { ...state.task, status: applied.status, currentStep: applied.currentStep }
                state.snapshots = applied.snapshots
                dirty = true
                outcome = "applied"
              }
            }
          }
          const ids = outcomes.get(outcome)
          if (ids === undefined) outcomes.set(outcome, [Number(s.id)])
          else ids.push(Number(s.id))
        }
        if (timeline.length > 0) yield* appendToTimeline(sql, timeline[0]!.tenantId, rootTaskId, timeline, now)
        for (const [outcome, ids] of outcomes) {
          yield* sql`UPDATE signals SET delivered_at = ${now}, outcome = ${outcome}, attempts = attempts + 1,
            next_attempt_ms = NULL, claimed_by = ${replicaId} WHERE ${sql.in("id", ids)} AND delivered_at IS NULL`
        }
        yield* flush
        return {
          _tag: "delivered",
          count: ready,
          more: rows.length > ready || rows.length === limit,
          events: timeline.length
        } as const
      })).pipe(retryBusy)

    /** The first pending signal of the task failed alone: record the attempt and its backoff. */
    const recordFailure = (rootTaskId: string, cause: Cause.Cause<unknown>) =>
      Effect.gen(function*() {
        const [s] = yield* sql<SignalRow>`SELECT ${sql.literal(SIGNAL_COLUMNS)} FROM signals
          WHERE root_task_id = ${rootTaskId} AND delivered_at IS NULL ORDER BY id LIMIT 1`
        if (s === undefined) return
        const attempts = Number(s.attempts) + 1
        const message = describeError(Cause.squash(cause)).slice(0, 2000)
        yield* Effect.logWarning(`signal ${s.id} (${s.name} on task ${s.task_id}) delivery attempt ${attempts} failed: ${message}`)
        yield* sql.withTransaction(
          sql`UPDATE signals SET attempts = attempts + 1, last_error = ${message},
            next_attempt_ms = ${Date.now() + retryDelayMs(attempts)} WHERE id = ${s.id} AND delivered_at IS NULL`
        ).pipe(retryBusy)
      }).pipe(Effect.catchCause((c) => Effect.logError(`task ${rootTaskId}: could not record a failed delivery`, c)))

    const isBusyCause = (cause: Cause.Cause<unknown>) => isBusy(Cause.squash(cause))

    /**
     * Delivers the task's pending signals batch by batch, giving the event loop a turn between
     * batches, until none is left or the rest waits for a failed one. Never fails.
     */
    const deliverTask = (rootTaskId: string, force: boolean, maxBatches = Infinity): Effect.Effect<TaskReport> =>
      Effect.gen(function*() {
        let delivered = 0
        let batches = 0
        // After a refused batch, its signals go one at a time, to find the one the database refuses.
        let singles = 0
        for (;;) {
          const result = yield* Effect.exit(deliverBatch(rootTaskId, singles > 0 ? 1 : batchSize, force))
          if (result._tag === "Failure") {
            const cause = result.cause
            if (Cause.hasInterruptsOnly(cause)) return yield* Effect.interrupt
            if (isBusyCause(cause)) return { delivered, failed: 0, deferred: 0, stalled: true }
            if (singles === 0 && batchSize > 1) {
              singles = batchSize
              continue
            }
            yield* recordFailure(rootTaskId, cause)
            return { delivered, failed: 1, deferred: 0, stalled: false }
          }
          const batch = result.value
          if (batch._tag === "empty") return { delivered, failed: 0, deferred: 0, stalled: false }
          if (batch._tag === "blocked") return { delivered, failed: 0, deferred: batch.pending, stalled: false }
          delivered += batch.count
          // Committed: open event streams of the task read the engine's events now.
          if (batch.events > 0) bell.ring(rootTaskId)
          if (singles > 0) singles--
          // The rest of a long backlog waits for the next pass (the relay runs one at once).
          if (!batch.more || ++batches >= maxBatches) return { delivered, failed: 0, deferred: 0, stalled: false }
          yield* yieldToEventLoop
        }
      })

    /**
     * The tasks with pending signals, one index seek each (signals_pending_by_task): a backlog
     * of 100,000 signals of one task costs one seek, not a walk over all of them.
     */
    const pendingTasks = sql<{ root_task_id: string }>`
      WITH RECURSIVE pending(root_task_id) AS (
        SELECT MIN(root_task_id) FROM signals WHERE delivered_at IS NULL
        UNION ALL
        SELECT (SELECT MIN(root_task_id) FROM signals WHERE delivered_at IS NULL AND root_task_id > pending.root_task_id)
        FROM pending WHERE pending.root_task_id IS NOT NULL
      ) SELECT root_task_id FROM pending WHERE root_task_id IS NOT NULL`

    /**
     * PostgreSQL: claims the task's oldest pending signals that no other live lease covers (one
     * statement, FOR UPDATE SKIP LOCKED); false when there are none: another replica is on it.
     * A refused claim counts as none (the next pass tries again). SQLite: always true (one writer).
     */
    const claim = (rootTaskId: string): Effect.Effect<boolean> =>
      onPg(
        () =>
          sql<{ id: string }>`UPDATE signals SET claimed_by = ${replicaId},
              claimed_until_ms = ${sql.literal(DB_NOW_MS)} + ${leaseMs}
            WHERE id IN (
              SELECT id FROM signals WHERE root_task_id = ${rootTaskId} AND delivered_at IS NULL
                AND (claimed_until_ms IS NULL OR claimed_until_ms < ${sql.literal(DB_NOW_MS)} OR claimed_by = ${replicaId})
              ORDER BY id LIMIT ${batchSize} FOR UPDATE SKIP LOCKED)
            RETURNING id`.pipe(Effect.map((rows) => rows.length > 0)),
        () => Effect.succeed(true)
      ).pipe(
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.interrupt
            : Effect.as(Effect.logWarning(`workspace outbox: could not claim task ${rootTaskId}`, cause), false)
        )
      )

    /**
     * One pass: every task with pending signals, `concurrency` at a time, `maxBatches` each
     * (then the next pass). `force` ignores backoff. Never fails: problems are logged and reported.
     */
    const pass = (force: boolean, maxBatches: number): Effect.Effect<DeliveryReport & { readonly stalled: boolean }> =>
      passLock.withPermits(1)(Effect.gen(function*() {
        const tasks = yield* retryBusy(pendingTasks)
        const reports = yield* Effect.forEach(tasks, (t) =>
          Effect.flatMap(
            claim(t.root_task_id),
            (claimed): Effect.Effect<TaskReport> =>
              claimed ? deliverTask(t.root_task_id, force, maxBatches) : Effect.succeed({ delivered: 0, failed: 0, deferred: 1, stalled: false })
          ), { concurrency })
        return reports.reduce(
          (a, r) => ({
            delivered: a.delivered + r.delivered,
            failed: a.failed + r.failed,
            deferred: a.deferred + r.deferred,
            stalled: a.stalled || r.stalled
          }),
          { delivered: 0, failed: 0, deferred: 0, stalled: false }
        )
      })).pipe(
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.interrupt
            : Effect.as(Effect.logError("workspace outbox: delivery pass failed", cause), {
              delivered: 0,
              failed: 0,
              deferred: 0,
              stalled: true
            })
        )
      )

    /** Delivers every pending signal now (tests, tools); the relay does the same in the background. */
    const deliverPending = (opts?: { readonly force?: boolean }): Effect.Effect<DeliveryReport> =>
      Effect.map(pass(opts?.force === true, Infinity), ({ delivered, deferred, failed }) => ({ delivered, failed, deferred }))

    const wake = Queue.offer(wakeUps, undefined).pipe(Effect.asVoid)

    /**
     * After a write's commit: a few signals are delivered before the write answers (bounded by
     * awaitTimeout); more are left to the relay. Either way the relay is woken. Never fails.
     */
    const afterCommit = (recorded: ReadonlyMap<string, number>): Effect.Effect<void> => {
      let total = 0
      for (const n of recorded.values()) total += n
      if (total === 0) return Effect.void
      if (total > awaitMax || Duration.toMillis(awaitTimeout) <= 0) return wake
      // The relay is woken afterwards (and also when the caller gives up waiting).
      return Effect.forEach(recorded.keys(), (task) => deliverTask(task, false), { discard: true }).pipe(
        Effect.timeout(awaitTimeout),
        Effect.ignore,
        Effect.ensuring(wake)
      )
    }

    /**
     * PostgreSQL: NOTIFYs of other replicas' writes wake this relay. The listening connection is
     * opened again after a loss (polling covers the gap).
     */
    const listen: Effect.Effect<void> = Option.match(pg, {
      onNone: () => Effect.void,
      onSome: (client) =>
        Effect.scoped(
          Effect.flatMap(client.listen(SIGNALS_CHANNEL), (notifications) =>
            Stream.runForEach(Stream.fromQueue(notifications), () => wake))
        ).pipe(
          Effect.andThen(Effect.fail("listen ended")),
          Effect.tapError(() => Effect.logWarning("workspace outbox: LISTEN connection lost; polling until it is back")),
          Effect.retry(Schedule.spaced("1 second")),
          Effect.ignore
        )
    })

    /** The background relay: runs until interrupted (the store's scope closes). */
    const relay: Effect.Effect<never> = Effect.gen(function*() {
      // A child of the relay's fiber: interrupted with it.
      yield* Effect.forkChild(listen)
      let force = true
      let failures = 0
      for (;;) {
        const report = yield* pass(force, BATCHES_PER_PASS)
        force = false
        if (report.delivered + report.failed > 0 || report.deferred > 0) {
          yield* Effect.logDebug(
            `workspace outbox: delivered ${report.delivered}, failed ${report.failed}, deferred ${report.deferred}`
          )
        }
        if (report.stalled) {
          failures++
          yield* Effect.sleep(Duration.millis(relayBackoffMs(failures)))
          continue
        }
        failures = 0
        // Something went through: look again at once (more may have been recorded meanwhile).
        if (report.delivered > 0) {
          yield* yieldToEventLoop
          continue
        }
        yield* Queue.take(wakeUps).pipe(Effect.timeout(pollInterval), Effect.ignore)
      }
    })

    return { record, collect, afterCommit, deliverPending, relay, wake }
  })
