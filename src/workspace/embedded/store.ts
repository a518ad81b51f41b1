/**
 * The embedded workspace: the WorkspaceClient port on SQLite (@effect/sql-libsql), with the
 * semantics of the reference implementation in ../memory.ts.
 *
 * Writes that a signal follows (documents, data batches, approve/reject, row actions) store
 * the write and its signal rows in one transaction; after the commit the outbox delivers
 * them (./outbox.ts). What a caller must hear about (404, 400 with currentStatus, INVALID_FIELD)
 * is checked inside that transaction, before anything is recorded, with the same rules the
 * engine applies on delivery.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { BadRequest, Conflict, NotFound } from "../../api/errors.js"
import { rootTaskId } from "../../api/ids.js"
import { EVENT_SIZE_OVERHEAD, eventsWithinBytes } from "../../api/eventPaging.js"
import type { CreatedTask, Scalar, TaskEvent } from "../../api/resources.js"
import { TaskEventBell } from "../../services/TaskEventBell.js"
import { currentIdempotencyKey, type WorkspaceClientService, type WsEffect } from "../../upstream/WorkspaceClient.js"
import { decideEdit, decideReject, type RowDecision } from "../../domain/ledgers.js"
import type { Workspace } from "../../upstream/model.js"
import { nextStepOf, tableLedgerOf, tableRowOf, withTableRows } from "../../domain/runbook.js"
import {
  type Agent,
  type AgentVersion,
  type CreateAgentInput,
  type CreateAgentVersionInput,
  type CreatedAgent,
  makeAgentRegistry
} from "./agents.js"
import {
  BusyTimeout,
  type DocumentRow,
  documentOfRow,
  type EventRow,
  eventOfRow,
  fromJson,
  type GlRow,
  glOfRow,
  guardFor,
  insertChunks,
  nowIso,
  rowFields,
  runbookFromJson,
  staleRow,
  type SubledgerRow,
  type TaskRow,
  taskOfRow,
  toJson,
  yieldToEventLoop
} from "./db.js"
import { jsonText } from "../../api/jsonText.js"
import {
  acceptSignal,
  audit,
  historyStart,
  isRowAction,
  newTask,
  type PendingDecision,
  refusalOf,
  rowActionAllowed,
  rowActionOf,
  sameEvent,
  type StepHistory
} from "../../domain/engine.js"
import { type Attribution, attributionNow } from "../../services/Actor.js"
import { preciseNowMs } from "../../lib/preciseClock.js"
import { appendToTimeline } from "./timeline.js"
import { decodeResult, encodeResult, IDEMPOTENCY_TTL_MS, keyReused, writeFingerprint } from "../../domain/idempotency.js"
import { DEFAULT_GL_SESSION_TTL_MS, glSessionCutoff, unknownGlService } from "../../domain/glServices.js"
import { type DeliveryReport, makeOutbox, type NewSignal, type RelayOptions } from "./outbox.js"
import { ChunkReader, readChunks } from "./chunkReader.js"

/** The port plus what the workspace HTTP API serves beyond it: GL webhook, agent registry, outbox. */
export interface EmbeddedWorkspace extends WorkspaceClientService {
  /** The GL adapter's success webhook: the session's tenant gets an ACTIVE connection. */
  readonly completeGlSession: (consumerId: string, service: string) => WsEffect<Workspace.GlConnection, NotFound | BadRequest>
  /**
   * The connect session `consumerId` while it is open (not yet completed), with its tenant; None
   * for an unknown or completed one. The GL connect page checks the tenant before answering.
   */
  readonly openGlSession: (consumerId: string) => WsEffect<Option.Option<GlSession>>
  readonly createAgent: (input: CreateAgentInput) => WsEffect<CreatedAgent, BadRequest>
  readonly listAgents: (tenantId?: string) => WsEffect<ReadonlyArray<Agent>>
  readonly getAgent: (id: string) => WsEffect<Agent, NotFound>
  readonly deleteAgent: (id: string) => WsEffect<void, NotFound>
  readonly createAgentVersion: (id: string, input: CreateAgentVersionInput) => WsEffect<AgentVersion, NotFound | BadRequest | Conflict>
  /** The agent holding this API key; NotFound for an unknown key (the caller answers 401). */
  readonly authenticateAgent: (apiKey: string) => WsEffect<Agent, NotFound>
  /** Delivers pending outbox signals now (the relay also does, in the background). */
  readonly deliverPending: (options?: { readonly force?: boolean }) => Effect.Effect<DeliveryReport>
  /** The outbox relay: delivers signals in the background until interrupted (the layer forks it). */
  readonly relay: Effect.Effect<never>
}

/** An open GL connect session: whose it is and which service it preselects. */
export interface GlSession {
  readonly consumerId: string
  readonly tenantId: string
  readonly tenantSlug: string
  readonly serviceId: string | null
}

export interface EmbeddedOptions {
  /** Base URL of the process serving the GL connect page, for connect-session URLs. */
  readonly publicUrl?: string | undefined
  /** A connect session older than this can no longer be opened or completed; default 15 minutes. */
  readonly glSessionTtlMs?: number | undefined
  /** Batching, concurrency and waits of signal delivery (./outbox.ts). */
  readonly relay?: RelayOptions | undefined
}

/**
 * Rows per INSERT statement: keeps a large batch under SQLite's bound-parameter limit, and each
 * statement (synchronous in the driver) short: about 10 ms of event loop for 250 rows.
 */
const INSERT_GROUP = 250

/** Task ids per next-steps query: far below SQLite's bound-parameter limit. */
const NEXT_STEP_GROUP = 500

const notFound = (what: string) => Effect.fail(new NotFound({ message: `${what} not found` }))

const fromDecision = <A>(d: RowDecision<A>, what: string): Effect.Effect<A, NotFound | BadRequest> =>
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

/** A table step's next step with the rows it reviews (the task's rows of the step's ledger). */
const withRowsOf = (next: Workspace.NextStep, ledger: string, rows: ReadonlyArray<SubledgerRow>) =>
  withTableRows(next, rows.map((r) => tableRowOf(ledger, { id: r.id, status: r.status, fields: rowFields(r) })))

export const makeEmbeddedWorkspaceWith = (options: EmbeddedOptions = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* makeOutbox(options.relay)
    // Every operation waits at most this long for another process's lock, then answers 503.
    const guard = guardFor(yield* BusyTimeout)
    const agents = yield* makeAgentRegistry
    const bell = yield* TaskEventBell
    const publicUrl = (options.publicUrl ?? "http://127.0.0.1:3000").replace(/\/$/, "")
    // Sessions created before the cutoff (ISO text, as created_at is) have expired: they name nothing.
    const glSessionTtlMs = options.glSessionTtlMs ?? DEFAULT_GL_SESSION_TTL_MS

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
        (rows) => Option.fromNullable(rows[0])
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
     * Whether the signal's task takes it, by the engine's one rule (../engine.ts acceptSignal),
     * inside the write's transaction with the task locked: bound to the step current when its
     * request arrived. Fails with what the caller must hear; succeeds with the signal to record
     * (bound and attributed), or undefined for a duplicate (a no-op that succeeds).
     *
     * A request's arrival is stamped as Node reads it (src/http/arrival.ts), but the SQLite driver
     * is synchronous and fibers resume on microtasks: without a break, one request can be read,
     * decided and applied before the event loop even reads a second one written at the same moment
     * on another connection, which is then stamped after the task moved (`letArrivalsIn`).
     */
    const accept = (tenantId: string, signal: Workspace.Signal, who: Attribution) =>
      Effect.gen(function*() {
        yield* lockTask(signal.taskId)
        const task = yield* taskOf(tenantId, signal.taskId)
        const pending = yield* pendingDecisions(task.id)
        const accepted = acceptSignal(
          { status: task.status, currentStep: task.current_step },
          fromJson(task.snapshots),
          signal,
          pending,
          {
            arrivedAt: who.arrivedAt,
            actor: who.actor,
            history: fromJson<StepHistory>(task.step_history),
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
     * Before a step-bound write of a request: two turns of the event loop (setImmediate twice),
     * so that a poll phase passes and every request already in the sockets' buffers is read and
     * stamped before this one can move the task on. One turn is not enough: it runs in the check
     * phase of the same loop iteration, before the next poll (measured on the built process: 2
     * approvals written together then decided both steps in about 1 round of 10).
     */
    const letArrivalsIn = (who: Attribution) =>
      who.arrivedAt === undefined ? Effect.void : Effect.zipRight(yieldToEventLoop, yieldToEventLoop)

    /**
     * Every write runs in a transaction, even a single statement: transactions take the write
     * lock up front on the writer connection (./libsql.ts), so a write never waits for a lock
     * held by this same process.
     */
    const write = sql.withTransaction

    /**
     * A write and its signals commit together; delivery follows the commit and never fails the
     * write: a few signals are delivered before it answers, more by the relay (./outbox.ts).
     */
    const writeThenDeliver = <A, E, R>(operation: string, self: Effect.Effect<A, E, R>) =>
      write(outbox.collect(self)).pipe(
        guard(operation),
        Effect.flatMap(({ recorded, value }) => Effect.as(outbox.afterCommit(recorded), value))
      )

    /** Decisions recorded for the task and not yet applied: they have decided their step already. */
    const pendingDecisions = (rootTaskId: string) =>
      sql<{ name: string; expected_step: string | null }>`
        SELECT name, expected_step FROM signals
        WHERE root_task_id = ${rootTaskId} AND delivered_at IS NULL AND (name = 'approve' OR name = 'reject')
        ORDER BY id`.pipe(
        Effect.map((rows) => rows.map((r): PendingDecision => ({ name: r.name, expectedStep: r.expected_step })))
      )

    /**
     * Idempotent writes (../idempotency.ts): run inside the write's transaction, so the key is
     * checked and its result stored atomically with the write; a concurrent retry waits for the
     * write lock and then finds it. Keys older than IDEMPOTENCY_TTL_MS are pruned now and then.
     */
    let prunedAtMs = 0
    const PRUNE_EVERY_MS = 10 * 60_000
    const idempotent = <A, E, R>(tenantId: string, fingerprintOf: Effect.Effect<string>, self: Effect.Effect<A, E, R>) =>
      Effect.flatMap(FiberRef.get(currentIdempotencyKey), (key) =>
        Option.isNone(key) ? self : Effect.gen(function*() {
          const fingerprint = yield* fingerprintOf
          // PostgreSQL: a concurrent retry on another replica waits here, then finds the stored result.
          yield* sql.onDialectOrElse({
            pg: () => Effect.asVoid(sql`SELECT pg_advisory_xact_lock(hashtextextended(${tenantId}::text || ':' || ${key.value}::text, 0))`),
            orElse: () => Effect.void
          })
          const [stored] = yield* sql<{ fingerprint: string; result: string | null }>`
            SELECT fingerprint, result FROM idempotency_keys WHERE tenant_id = ${tenantId} AND key = ${key.value}`
          if (stored !== undefined) {
            return stored.fingerprint === fingerprint ? decodeResult<A>(stored.result) : yield* Effect.fail(keyReused(key.value))
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

    /** A direct row change on the timeline of the row's task (none for a row of no task). */
    const auditRow = (tenantId: string, row: SubledgerRow, event: ReturnType<typeof audit.rowRejected>) =>
      row.task_id === null ? Effect.void : appendToTimeline(sql, tenantId, row.task_id, [event], nowIso())

    const rejectRowTx = (tenantId: string, ledger: string, rowId: string) =>
      Effect.gen(function*() {
        const who = yield* attributionNow
        const row = yield* rowOf(tenantId, ledger, rowId)
        const newStatus = yield* fromDecision(decideReject(ledger, row.status), `Row ${rowId} in ${ledger}`)
        // Compare-and-set on the status read: a row another replica changed meanwhile is read again.
        const updated = yield* sql`UPDATE subledger_rows SET status = ${newStatus}
          WHERE ledger = ${ledger} AND id = ${rowId} AND status = ${row.status} RETURNING id`
        if (updated.length === 0) return yield* Effect.fail(staleRow(`Row ${rowId} in ${ledger}`))
        yield* auditRow(tenantId, row, audit.rowRejected(row, row.status, newStatus, "direct", who))
        return { status: "OK" as const, rowId, newStatus }
      })

    const updateRowTx = (tenantId: string, ledger: string, rowId: string, field: string, value: Scalar) =>
      Effect.gen(function*() {
        const who = yield* attributionNow
        const row = yield* rowOf(tenantId, ledger, rowId)
        const coerced = yield* fromDecision(decideEdit(ledger, row.status, field, value), `Row ${rowId} in ${ledger}`)
        const before = rowFields(row)
        const fields = { ...before, [field]: coerced }
        const updated = yield* sql`UPDATE subledger_rows SET fields = ${toJson(fields)}
          WHERE ledger = ${ledger} AND id = ${rowId} AND status = ${row.status} AND fields = ${row.fields} RETURNING id`
        if (updated.length === 0) return yield* Effect.fail(staleRow(`Row ${rowId} in ${ledger}`))
        yield* auditRow(tenantId, row, audit.cellEdited(row, field, before[field], coerced, "direct", who))
        return { status: "OK" as const, rowId, field, value: coerced }
      })

    const service: EmbeddedWorkspace = {
      resolveTenant: (slug) =>
        sql<Workspace.Tenant>`SELECT id, slug, name FROM tenants WHERE slug = ${slug}`.pipe(
          Effect.flatMap(([t]) => t === undefined ? notFound(`Tenant ${slug}`) : Effect.succeed({ ...t })),
          guard("resolveTenant")
        ),

      listEntities: (tenantId) =>
        sql<{ id: string; tenant_id: string; slug: string; name: string }>`
          SELECT id, tenant_id, slug, name FROM entities WHERE tenant_id = ${tenantId} ORDER BY rowid`.pipe(
          Effect.map((rows) => rows.map((e) => ({ id: e.id, tenantId: e.tenant_id, slug: e.slug, name: e.name }))),
          guard("listEntities")
        ),

      getEntity: (tenantId, entityId) =>
        sql<{ id: string; tenant_id: string; slug: string; name: string }>`
          SELECT id, tenant_id, slug, name FROM entities WHERE id = ${entityId} AND tenant_id = ${tenantId}`.pipe(
          Effect.flatMap(([e]) =>
            e === undefined
              ? notFound(`Entity ${entityId}`)
              : Effect.succeed({ id: e.id, tenantId: e.tenant_id, slug: e.slug, name: e.name })
          ),
          guard("getEntity")
        ),

      listTasks: (tenantId, entityId) =>
        sql<TaskRow>`SELECT * FROM tasks WHERE tenant_id = ${tenantId} AND entity_id = ${entityId} ORDER BY rowid`.pipe(
          Effect.map((rows) => rows.map(taskOfRow)),
          guard("listTasks")
        ),

      getTask: (taskId) =>
        sql<TaskRow>`SELECT * FROM tasks WHERE id = ${rootTaskId(taskId)}`.pipe(
          Effect.flatMap(([row]) => row === undefined ? notFound(`Task ${taskId}`) : Effect.succeed(taskOfRow(row))),
          guard("getTask")
        ),

      getNextStep: (tenantId, taskId) =>
        Effect.gen(function*() {
          const row = yield* taskOf(tenantId, taskId)
          const runbook = yield* runbookOf(row.workflow_id)
          const next = nextStepOf(taskOfRow(row), runbook, fromJson(row.snapshots))
          // A table step's args carry the rows it reviews: the task's rows of the step's ledger.
          const ledger = next.step === null ? undefined : tableLedgerOf(next.step)
          if (ledger === undefined) return next
          const rows = yield* sql<SubledgerRow>`SELECT * FROM subledger_rows
            WHERE task_id = ${row.id} AND ledger = ${ledger} AND tenant_id = ${tenantId} ORDER BY id`
          return withRowsOf(next, ledger, rows)
        }).pipe(guard("getNextStep")),

      // One query per NEXT_STEP_GROUP ids (tasks joined to their runbooks), each runbook decoded once.
      getNextSteps: (tenantId, taskIds) =>
        Effect.gen(function*() {
          const roots = [...new Set(taskIds.map(rootTaskId))]
          const found = new Map<string, TaskRow & { readonly runbook: string | null }>()
          for (let i = 0; i < roots.length; i += NEXT_STEP_GROUP) {
            const rows = yield* sql<TaskRow & { readonly runbook: string | null }>`
              SELECT t.*, w.runbook AS runbook FROM tasks t LEFT JOIN workflows w ON w.id = t.workflow_id
              WHERE t.tenant_id = ${tenantId} AND ${sql.in("t.id", roots.slice(i, i + NEXT_STEP_GROUP))}`
            for (const row of rows) found.set(row.id, row)
          }
          const runbooks = new Map<string, Workspace.Runbook | null>()
          const runbookOfRow = (row: TaskRow & { readonly runbook: string | null }) => {
            if (!runbooks.has(row.workflow_id)) {
              // A runbook that does not decode fails its tasks' lookups only.
              let runbook: Workspace.Runbook | null = null
              try {
                runbook = runbookFromJson(row.runbook)
              } catch {
                runbook = null
              }
              runbooks.set(row.workflow_id, runbook)
            }
            return runbooks.get(row.workflow_id) ?? null
          }
          const answers = taskIds.map((taskId): Workspace.NextStepOf => {
            const row = found.get(rootTaskId(taskId))
            const runbook = row === undefined ? null : runbookOfRow(row)
            if (row === undefined || runbook === null) return { taskId, nextStep: null }
            try {
              return { taskId, nextStep: nextStepOf(taskOfRow(row), runbook, fromJson(row.snapshots)) }
            } catch {
              return { taskId, nextStep: null }
            }
          })
          // Table steps carry their rows, as getNextStep gives them: one query per group of tasks.
          const tableTasks = [...new Set(answers.flatMap(({ nextStep, taskId }) =>
            nextStep?.step != null && tableLedgerOf(nextStep.step) !== undefined ? [rootTaskId(taskId)] : []
          ))]
          if (tableTasks.length === 0) return answers
          const rowsByTask = new Map<string, Array<SubledgerRow>>()
          for (let i = 0; i < tableTasks.length; i += NEXT_STEP_GROUP) {
            const rows = yield* sql<SubledgerRow>`SELECT * FROM subledger_rows
              WHERE tenant_id = ${tenantId} AND ${sql.in("task_id", tableTasks.slice(i, i + NEXT_STEP_GROUP))} ORDER BY id`
            for (const r of rows) {
              if (r.task_id === null) continue
              const list = rowsByTask.get(r.task_id)
              if (list === undefined) rowsByTask.set(r.task_id, [r])
              else list.push(r)
            }
          }
          return answers.map((answer) => {
            const ledger = answer.nextStep?.step == null ? undefined : tableLedgerOf(answer.nextStep.step)
            if (answer.nextStep === null || ledger === undefined) return answer
            const rows = (rowsByTask.get(rootTaskId(answer.taskId)) ?? []).filter((r) => r.ledger === ledger)
            return { ...answer, nextStep: withRowsOf(answer.nextStep, ledger, rows) }
          })
        }).pipe(guard("getNextSteps")),

      listWorkflows: (tenantId) =>
        sql<{ id: string; name: string; tenant_id: string | null }>`
          SELECT id, name, tenant_id FROM workflows WHERE tenant_id IS NULL OR tenant_id = ${tenantId} ORDER BY rowid`.pipe(
          Effect.map((rows) => rows.map((w) => ({ id: w.id, name: w.name, tenantId: w.tenant_id }))),
          guard("listWorkflows")
        ),

      getRunbook: (tenantId, workflowId) =>
        Effect.gen(function*() {
          const wf = yield* workflowOf(workflowId)
          if (Option.isNone(wf) || (wf.value.tenant_id !== null && wf.value.tenant_id !== tenantId)) {
            return yield* notFound(`Workflow ${workflowId}`)
          }
          return yield* runbookOf(workflowId)
        }).pipe(guard("getRunbook")),

      createTask: (tenantId, entityId, input) =>
        write(idempotent(tenantId, writeFingerprint.createTask(entityId, input), Effect.gen(function*() {
          const [entity] = yield* sql`SELECT id FROM entities WHERE id = ${entityId} AND tenant_id = ${tenantId}`
          if (entity === undefined) return yield* notFound(`Entity ${entityId}`)
          const wf = yield* workflowOf(input.workflowId)
          if (Option.isNone(wf) || (wf.value.tenant_id !== null && wf.value.tenant_id !== tenantId)) {
            return yield* Effect.fail(new BadRequest({ message: `workflowId: unknown workflow "${input.workflowId}"` }))
          }
          const task = newTask(
            { id: randomUUID(), tenantId, entityId, createdAt: nowIso() },
            { id: wf.value.id, name: wf.value.name, runbook: runbookFromJson(wf.value.runbook) },
            input.context
          )
          const who = yield* attributionNow
          yield* sql`INSERT INTO tasks ${
            sql.insert({
              id: task.id,
              tenant_id: tenantId,
              entity_id: entityId,
              workflow_id: task.workflowId,
              title: task.title,
              status: task.status,
              priority: task.priority,
              created_at: task.createdAt,
              current_step: task.currentStep,
              snapshots: "{}",
              context: toJson(input.context),
              step_history: toJson(historyStart(task.currentStep, preciseNowMs()))
            })
          }`
          yield* appendToTimeline(sql, tenantId, task.id, [audit.taskCreated(task, input.context, who)], task.createdAt)
          return { ...task, context: input.context } satisfies CreatedTask
        }))).pipe(guard("createTask")),

      getSnapshots: (tenantId, taskId) =>
        taskOf(tenantId, taskId).pipe(
          Effect.map((row) => fromJson<Record<string, unknown>>(row.snapshots)),
          guard("getSnapshots")
        ),

      signal: (tenantId, signal) =>
        Effect.flatMap(attributionNow, (who) =>
          writeThenDeliver(
            "signal",
            idempotent(tenantId, writeFingerprint.signal(signal), Effect.gen(function*() {
              // Validated now so the caller hears 404/400/403/409; the engine applies it on delivery.
              yield* lockTask(signal.taskId)
              const task = yield* taskOf(tenantId, signal.taskId)
              const rowAction = isRowAction(signal)
              const p = rowActionOf(signal.payload)
              const what = `Row ${p.rowId} in ${p.ledger}`
              const row = rowAction ? yield* rowOf(tenantId, p.ledger, p.rowId) : undefined
              const allowed = row === undefined ? undefined : rowActionAllowed(
                { id: task.id, status: task.status, currentStep: task.current_step },
                yield* Effect.orElseSucceed(runbookOf(task.workflow_id), () => null),
                row.task_id
              )
              if (allowed?._tag === "notFound") return yield* fromDecision(allowed, `${what} of task ${task.id}`)
              // Bound to the step its request saw (../engine.ts): decisions still in the outbox count as taken.
              const bound = yield* accept(tenantId, signal, who)
              if (bound === undefined) return
              if (row !== undefined) {
                if (allowed !== undefined && allowed._tag !== "ok") yield* fromDecision(allowed, `${what} of task ${task.id}`)
                if (p.action === "reject_row") yield* fromDecision(decideReject(p.ledger, row.status), what)
                else yield* fromDecision(decideEdit(p.ledger, row.status, p.field ?? "", p.value ?? null), what)
              }
              yield* outbox.record([signalFor(tenantId, bound, signal, who)])
            }))
          ).pipe((self) => Effect.zipRight(letArrivalsIn(who), self))),

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
        }))).pipe(guard("appendEvent"), Effect.tap(() => bell.ring(taskId))),

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
        }).pipe(guard("listEvents")),

      listDocuments: (tenantId, taskId, query) =>
        sql<DocumentRow>`
          SELECT * FROM documents WHERE tenant_id = ${tenantId} AND task_id = ${rootTaskId(taskId)}
          ${query.source !== undefined ? sql`AND source = ${query.source}` : sql``}
          ORDER BY uploaded_ms DESC, rowid DESC LIMIT ${query.limit}`.pipe(
          Effect.map((rows) => rows.map(documentOfRow)),
          guard("listDocuments")
        ),

      putDocument: (tenantId, doc, signal) =>
        Effect.flatMap(attributionNow, (who) =>
        Effect.zipRight(Option.isSome(signal) ? letArrivalsIn(who) : Effect.void, writeThenDeliver(
          "putDocument",
          idempotent(tenantId, writeFingerprint.putDocument(doc, Option.getOrNull(signal)), Effect.gen(function*() {
            const task = yield* taskOf(tenantId, doc.taskId)
            // Bound to the step its request saw; a duplicate file signal stores the file and signals nothing.
            const bound = Option.isSome(signal) ? yield* accept(tenantId, signal.value, who) : undefined
            const uploadedAt = new Date()
            const row: DocumentRow & { uploaded_ms: number } = {
              id: randomUUID(),
              tenant_id: tenantId,
              task_id: task.id,
              source: doc.source,
              filename: doc.filename,
              content_type: doc.contentType,
              size_bytes: doc.bytes.length,
              uploaded_at: uploadedAt.toISOString(),
              uploaded_ms: uploadedAt.getTime(),
              period: doc.period ?? null,
              schema_slug: doc.schemaSlug ?? null
            }
            yield* sql`INSERT INTO documents ${sql.insert({ ...row })}`
            yield* insertChunks(sql, row.id, doc.bytes)
            const stored = documentOfRow(row)
            yield* lockTask(task.id)
            yield* appendToTimeline(sql, tenantId, task.id, [
              audit.fileStored(stored, Option.isSome(signal) ? signal.value.name : null, who)
            ], row.uploaded_at)
            if (Option.isSome(signal) && bound !== undefined) {
              const withRef = { ...signal.value, payload: { ...signal.value.payload, documentRef: row.id } }
              yield* outbox.record([signalFor(tenantId, bound, withRef, who)])
            }
            return stored
          }))
        ))),

      openDocument: (tenantId, documentId) =>
        sql<DocumentRow>`SELECT * FROM documents WHERE id = ${documentId} AND tenant_id = ${tenantId}`.pipe(
          Effect.flatMap(([row]) =>
            row === undefined
              ? notFound(`Document ${documentId}`)
              : Effect.succeed({ document: documentOfRow(row), body: chunksOf(documentId) })
          ),
          guard("openDocument")
        ),

      ingestData: (tenantId, batch, signal) =>
        Effect.flatMap(attributionNow, (who) =>
        Effect.zipRight(Option.isSome(signal) ? letArrivalsIn(who) : Effect.void, writeThenDeliver(
          "ingestData",
          idempotent(tenantId, writeFingerprint.ingestData(batch, Option.getOrNull(signal)), Effect.gen(function*() {
            const task = yield* taskOf(tenantId, batch.taskId)
            const bound = Option.isSome(signal) ? yield* accept(tenantId, { ...signal.value, payload: {} }, who) : undefined
            const createdAt = nowIso()
            const ids = batch.rows.map(() => randomUUID())
            // A group at a time, serialized just before its insert; each insert runs synchronously
            // in the driver, so the event loop gets a turn between groups (other requests go on).
            for (let start = 0; start < ids.length; start += INSERT_GROUP) {
              if (start > 0) yield* yieldToEventLoop
              const group = batch.rows.slice(start, start + INSERT_GROUP).map((r, i) => ({
                id: ids[start + i]!,
                tenant_id: tenantId,
                task_id: batch.taskId,
                root_task_id: task.id,
                kind: batch.kind ?? null,
                data: jsonText(r.data),
                source_ref: r.sourceRef !== undefined ? toJson(r.sourceRef) : null,
                created_at: createdAt
              }))
              yield* sql`INSERT INTO data_records ${sql.insert(group)}`
            }
            yield* lockTask(task.id)
            yield* appendToTimeline(sql, tenantId, task.id, [
              audit.dataIngested(batch.taskId, batch.kind ?? null, ids, Option.isSome(signal) ? signal.value.name : null, who)
            ], createdAt)
            if (Option.isSome(signal) && bound !== undefined) {
              for (let start = 0; start < ids.length; start += INSERT_GROUP) {
                yield* yieldToEventLoop
                yield* outbox.record(ids.slice(start, start + INSERT_GROUP).map((rowId) =>
                  signalFor(tenantId, bound, {
                    ...signal.value,
                    payload: { rowId, kind: batch.kind ?? null, taskId: batch.taskId }
                  }, who)
                ))
              }
            }
            return ids.map((id) => ({ id, signaled: Option.isSome(signal) }))
          }))
        ))),

      rejectRow: (tenantId, ledger, rowId) =>
        write(idempotent(tenantId, writeFingerprint.rejectRow(ledger, rowId), rejectRowTx(tenantId, ledger, rowId))).pipe(
          guard("rejectRow")
        ),

      updateRow: (tenantId, ledger, rowId, field, value) =>
        write(
          idempotent(tenantId, writeFingerprint.updateRow(ledger, rowId, field, value), updateRowTx(tenantId, ledger, rowId, field, value))
        ).pipe(guard("updateRow")),

      getGlConnection: (tenantId) =>
        sql<GlRow>`SELECT * FROM gl_connections WHERE tenant_id = ${tenantId}`.pipe(
          Effect.map(([row]) => Option.map(Option.fromNullable(row), glOfRow)),
          guard("getGlConnection")
        ),

      createGlSession: (tenantId, serviceId) =>
        write(idempotent(tenantId, writeFingerprint.createGlSession(serviceId), Effect.gen(function*() {
          const unknown = serviceId === undefined ? undefined : unknownGlService(serviceId)
          if (unknown !== undefined) return yield* new BadRequest({ message: unknown })
          const [tenant] = yield* sql<{ id: string }>`SELECT id FROM tenants WHERE id = ${tenantId}`
          if (tenant === undefined) return yield* notFound(`Tenant ${tenantId}`)
          const consumerId = randomUUID()
          yield* sql`INSERT INTO gl_sessions ${
            sql.insert({ consumer_id: consumerId, tenant_id: tenantId, service_id: serviceId ?? null, created_at: nowIso() })
          }`
          return { sessionUrl: `${publicUrl}/workspace/gl/connect/${consumerId}`, consumerId }
        }))).pipe(guard("createGlSession")),

      deleteGlConnection: (tenantId) =>
        write(
          idempotent(tenantId, writeFingerprint.deleteGlConnection(), Effect.asVoid(sql`DELETE FROM gl_connections WHERE tenant_id = ${tenantId}`))
        ).pipe(guard("deleteGlConnection")),

      openGlSession: (consumerId) =>
        sql<{ tenant_id: string; slug: string; service_id: string | null }>`
          SELECT s.tenant_id, t.slug, s.service_id FROM gl_sessions s JOIN tenants t ON t.id = s.tenant_id
          WHERE s.consumer_id = ${consumerId} AND s.completed_at IS NULL AND s.created_at > ${glSessionCutoff(glSessionTtlMs)}`.pipe(
          Effect.map(([row]) =>
            Option.map(Option.fromNullable(row), (r): GlSession => ({
              consumerId,
              tenantId: r.tenant_id,
              tenantSlug: r.slug,
              serviceId: r.service_id
            }))
          ),
          guard("openGlSession")
        ),

      completeGlSession: (consumerId, svc) =>
        write(Effect.gen(function*() {
          if (svc.trim() === "") return yield* Effect.fail(new BadRequest({ message: "service: required" }))
          const [session] = yield* sql<{ tenant_id: string }>`
            SELECT tenant_id FROM gl_sessions
            WHERE consumer_id = ${consumerId} AND completed_at IS NULL AND created_at > ${glSessionCutoff(glSessionTtlMs)}`
          // A session completes once, and only within its lifetime; a replayed webhook finds nothing to complete.
          if (session === undefined) return yield* notFound(`Connect session ${consumerId}`)
          const now = nowIso()
          const connection: Workspace.GlConnection = {
            tenantId: session.tenant_id,
            provider: "local",
            service: svc,
            status: "ACTIVE",
            connectedAt: now,
            metadata: { name: `Local ${svc}`, service: svc, updated_at: now }
          }
          yield* upsertGl(connection)
          yield* sql`UPDATE gl_sessions SET completed_at = ${now} WHERE consumer_id = ${consumerId}`
          return connection
        })).pipe(guard("completeGlSession")),

      ...agents,
      deliverPending: outbox.deliverPending,
      relay: outbox.relay
    }

    /** The bytes, one chunk per query: a download holds at most one chunk in memory. */
    const chunkReader = yield* Effect.serviceOption(ChunkReader)
    const chunksOf = (documentId: string) =>
      Option.isSome(chunkReader) ? readChunks(chunkReader.value, documentId) : Stream.paginateChunkEffect(0, (idx: number) =>
        sql<{ data: ArrayBuffer }>`SELECT data FROM document_chunks WHERE document_id = ${documentId} AND idx = ${idx}`.pipe(
          Effect.map(([row]) =>
            row === undefined
              ? [Chunk.empty<Uint8Array>(), Option.none<number>()] as const
              : [Chunk.of(new Uint8Array(row.data)), Option.some(idx + 1)] as const
          ),
          guard("readDocument")
        ))

    const upsertGl = (c: Workspace.GlConnection) =>
      sql`INSERT INTO gl_connections ${
        sql.insert({
          tenant_id: c.tenantId,
          provider: c.provider,
          service: c.service,
          status: c.status,
          connected_at: c.connectedAt,
          metadata: toJson(c.metadata)
        })
      } ON CONFLICT (tenant_id) DO UPDATE SET provider = excluded.provider, service = excluded.service,
        status = excluded.status, connected_at = excluded.connected_at, metadata = excluded.metadata`

    return service
  })

/** The embedded workspace over the SqlClient in context (run migrations first). */
export const makeEmbeddedWorkspace = makeEmbeddedWorkspaceWith()
