/**
 * The embedded store's tasks: lists, next steps (a table step with the rows it reviews), new
 * tasks, snapshots and signals, checked by the engine's rules before the outbox delivers them.
 */
import * as Effect from "effect/Effect"
import type { SqlError } from "effect/sql/SqlError"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { BadRequest } from "../../api/errors.js"
import { rootTaskId } from "../../api/ids.js"
import { isTerminalStatus } from "../../api/taskListing.js"
import type { CreatedTask } from "../../api/resources.js"
import type * as Statement from "effect/sql/Statement"
import type { TaskQuery, WorkspaceClientService } from "../../upstream/WorkspaceClient.js"
import { unknownAfterId } from "../taskQuery.js"
import { decideEdit, decideReject, decideResolve } from "../../domain/ledgers.js"
import type { Workspace } from "../../upstream/model.js"
import { currentStep, nextStepOf, tableLedgerOf, tableRowOf, withTableRows } from "../../domain/runbook.js"
import { makeRunbookCache } from "./runbookCache.js"
import {
  fromJson,
  nowIso,
  rowFields,
  runbookFromJson,
  type SubledgerRow,
  type TaskRecordRow,
  type TaskRow,
  taskOfRow,
  toJson
} from "./db.js"
import { audit, historyStart, isRowAction, newTask, rowActionAllowed, rowActionOf, waitingEvent } from "../../domain/engine.js"
import { attributionNow } from "../../services/Actor.js"
import { preciseNowMs } from "../../lib/preciseClock.js"
import { appendToTimeline } from "./timeline.js"
import { claimBeforeDecision } from "./claims.js"
import { writeFingerprint } from "../../domain/idempotency.js"
import { type Transactions, fromDecision, notFound } from "./transaction.js"


/** What a task record (taskOfRow) reads of its row: a list reads no more (the JSON columns are most of a row). */
const TASK_COLUMNS = "id, tenant_id, entity_id, workflow_id, title, status, priority, created_at, current_step"

/** A task board's row: the record and its snapshots (a task whose snapshots do not parse has no `awaiting`, as its next step fails). */
const BOARD_COLUMNS = `${TASK_COLUMNS}, snapshots`

/**
 * SQLite: a list's rows (a board's, listTasks') as one JSON array made by SQLite, each row an
 * object keyed by its column names, in list order. @libsql/client makes every row of a result with a `defineProperty` per
 * cell; one cell parsed with JSON.parse instead took a board's 50 rows from 355 to 175 us of CPU
 * per query (same rows, same values: every column is text or a number).
 */
const rowsAsJson = (columns: string) =>
  `json_group_array(json_object(${columns.split(", ").map((c) => `'${c}', ${c}`).join(", ")}) ORDER BY rowid)`

/**
 * The rows of a JSON cell, each text cut at its first NUL as the driver reads a cell row by row
 * (every other read of a task): a fixture (SVC_SEED_FILE) can store a NUL the API refuses, and
 * the cell keeps what follows it (as `\u0000`), so a list showed more of a title than the task's
 * own page, and other bytes than before it was one cell. Cut here, only when the cell holds the
 * escape: a CASE per column in the SQL cost 0.1-0.25 ms more per 50-row query (sqlite3 shell).
 */
const rowsOfCell = <Row>(cell: string): ReadonlyArray<Row> => {
  const rows = JSON.parse(cell) as Array<Record<string, unknown>>
  if (!cell.includes("\\u0000")) return rows as ReadonlyArray<Row>
  for (const row of rows) {
    for (const key in row) {
      const value = row[key]
      if (typeof value === "string" && value.includes("\u0000")) row[key] = value.slice(0, value.indexOf("\u0000"))
    }
  }
  return rows as ReadonlyArray<Row>
}

/** Task ids per next-steps query: far below SQLite's bound-parameter limit. */
const NEXT_STEP_GROUP = 500

/** A table step's next step with the rows it reviews (the task's rows of the step's ledger). */
const withRowsOf = (next: Workspace.NextStep, ledger: string, rows: ReadonlyArray<SubledgerRow>) =>
  withTableRows(next, rows.map((r) => tableRowOf(ledger, { id: r.id, status: r.status, fields: rowFields(r) })))


/**
 * What a running task awaits: its current step's display component, exactly as getNextSteps's
 * next step gives it (nextStepOf), without building the step list: undefined when its snapshots
 * do not parse (its next step fails) or its current step is not in the runbook.
 */
const awaitingOf = (task: Workspace.Task, runbook: Workspace.Runbook, snapshots: string): string | undefined => {
  try {
    fromJson(snapshots)
    return currentStep(task, runbook)?.displayHint.component
  } catch {
    return undefined
  }
}

export const taskRecords = (tx: Transactions): Pick<WorkspaceClientService, "listTasks" | "listTaskBoard" | "getTask" | "getNextStep" | "getNextSteps" | "createTask" | "getSnapshots" | "signal"> => {
  const runbookCache = makeRunbookCache()
  /** A runbook that does not decode fails its tasks' lookups only. */
  const decodeRunbook = (workflowId: string, text: string | null): Workspace.Runbook | null => {
    try {
      return runbookCache.decode(workflowId, text)
    } catch {
      return null
    }
  }
  const { sql, outbox, guard, taskOf, workflowOf, runbookOf, rowOf, lockTask, accept, signalFor, letArrivalsIn, write, writeThenDeliver, idempotent } = tx

  /**
   * The WHERE clause of a TaskQuery (../taskQuery.ts says what it selects); undefined when it
   * selects nothing (an empty step list); a BadRequest for an `afterId` not in the entity's list.
   */
  const taskQueryWhere = (tenantId: string, entityId: string, query: TaskQuery) =>
    Effect.gen(function*() {
      const clauses: Array<Statement.Fragment> = [sql`tenant_id = ${tenantId}`, sql`entity_id = ${entityId}`]
      if (query.status !== undefined) clauses.push(sql`status = ${query.status}`)
      if (query.currentSteps !== undefined) {
        if (query.currentSteps.length === 0) return undefined
        const byWorkflow = new Map<string, Array<string>>()
        for (const { stepId, workflowId } of query.currentSteps) {
          byWorkflow.set(workflowId, [...(byWorkflow.get(workflowId) ?? []), stepId])
        }
        clauses.push(sql.or([...byWorkflow].map(([workflowId, steps]) =>
          sql.and([sql`workflow_id = ${workflowId}`, sql.in("current_step", steps)])
        )))
      }
      if (query.afterId !== undefined) {
        const [after] = yield* sql<{ readonly rowid: number | bigint | string }>`SELECT rowid FROM tasks
          WHERE id = ${query.afterId} AND tenant_id = ${tenantId} AND entity_id = ${entityId}`
        if (after === undefined) return yield* Effect.fail(new BadRequest({ message: unknownAfterId(query.afterId) }))
        clauses.push(sql`rowid > ${after.rowid}`)
      }
      return sql.and(clauses)
    })

  /** SQLite answers a list as one JSON cell (`rowsAsJson`); PostgreSQL row by row. */
  const rowByRow = sql.onDialectOrElse({ sqlite: () => false, orElse: () => true })
  const parseRows = <Row>(found: ReadonlyArray<{ readonly rows: string }>) => rowsOfCell<Row>(found[0]?.rows ?? "[]")

  /** A list's rows (`columns` of each task the query selects), in list order. */
  const listTaskRows = <Row extends object>(tenantId: string, entityId: string, query: TaskQuery | undefined, columns: string) =>
    Effect.flatMap(
      query === undefined
        ? Effect.succeed(sql`tenant_id = ${tenantId} AND entity_id = ${entityId}`)
        : taskQueryWhere(tenantId, entityId, query),
      (where): Effect.Effect<ReadonlyArray<Row>, SqlError> => {
        if (where === undefined) return Effect.succeed([])
        const limit = query?.limit
        if (rowByRow) {
          return sql<Row>`SELECT ${sql.literal(columns)} FROM tasks WHERE ${where} ORDER BY rowid${
            limit === undefined ? sql`` : sql` LIMIT ${limit}`
          }`
        }
        const json = sql.literal(rowsAsJson(columns))
        return Effect.map(
          limit === undefined
            ? sql<{ readonly rows: string }>`SELECT ${json} AS rows FROM tasks WHERE ${where}`
            : sql<{ readonly rows: string }>`SELECT ${json} AS rows FROM
                (SELECT rowid, ${sql.literal(columns)} FROM tasks WHERE ${where} ORDER BY rowid LIMIT ${limit})`,
          parseRows<Row>
        )
      }
    )

  return {
    // The list, each running task's `awaiting` as getNextSteps would give it, in three short
    // queries: the entity, the tasks, and each of their workflows' runbook once (decoded once per
    // text, ./runbookCache.ts); no table rows, which do not change what a step awaits.
    listTaskBoard: (tenantId, entityId, query) =>
      Effect.gen(function*() {
        const [entity] = yield* sql`SELECT id FROM entities WHERE id = ${entityId} AND tenant_id = ${tenantId}`
        if (entity === undefined) return yield* notFound(`Entity ${entityId}`)
        const rows = yield* listTaskRows<TaskRecordRow & Pick<TaskRow, "snapshots">>(tenantId, entityId, query, BOARD_COLUMNS)
        const workflows = [...new Set(rows.filter((r) => !isTerminalStatus(r.status)).map((r) => r.workflow_id))]
        const runbooks = new Map<string, Workspace.Runbook | null>()
        for (let i = 0; i < workflows.length; i += NEXT_STEP_GROUP) {
          const found = yield* sql<{ readonly id: string; readonly runbook: string | null }>`
            SELECT id, runbook FROM workflows WHERE ${sql.in("id", workflows.slice(i, i + NEXT_STEP_GROUP))}`
          for (const w of found) runbooks.set(w.id, decodeRunbook(w.id, w.runbook))
        }
        return rows.map((row): Workspace.BoardTask => {
          const task = taskOfRow(row)
          const runbook = isTerminalStatus(row.status) ? null : runbooks.get(row.workflow_id) ?? null
          if (runbook === null) return task
          const component = awaitingOf(task, runbook, row.snapshots)
          return component === undefined ? task : { ...task, awaiting: component }
        })
      }).pipe(guard("listTaskBoard")),

    listTasks: (tenantId, entityId, query) =>
      listTaskRows<TaskRecordRow>(tenantId, entityId, query, TASK_COLUMNS).pipe(
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
          if (!runbooks.has(row.workflow_id)) runbooks.set(row.workflow_id, decodeRunbook(row.workflow_id, row.runbook))
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

    createTask: (tenantId, entityId, input) =>
      write(idempotent(tenantId, writeFingerprint.createTask(entityId, input), Effect.gen(function*() {
        const [entity] = yield* sql`SELECT id FROM entities WHERE id = ${entityId} AND tenant_id = ${tenantId}`
        if (entity === undefined) return yield* notFound(`Entity ${entityId}`)
        // PostgreSQL draws the rowid (the list's order, the cursor's key) at the INSERT and shows
        // it at the commit: creations of one entity take turns, so they commit in rowid order and
        // a cursor past one task is never past a task still to appear before it. (SQLite writes
        // take turns already.)
        yield* sql.onDialectOrElse({
          pg: () => Effect.asVoid(sql`SELECT pg_advisory_xact_lock(hashtextextended(${"tasks:" + entityId}::text, 0))`),
          orElse: () => Effect.void
        })
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
            step_history: toJson(historyStart(task.currentStep, preciseNowMs())),
            waiting_since: task.createdAt
          })
        }`
        const waiting = waitingEvent(runbookFromJson(wf.value.runbook), task.currentStep, task.createdAt)
        yield* appendToTimeline(sql, tenantId, task.id, [
          audit.taskCreated(task, input.context, who),
          ...(waiting !== undefined ? [waiting] : [])
        ], task.createdAt)
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
            // Checked as the row actions still to be applied will leave it (tx.rowAsPending).
            const row = rowAction ? yield* Effect.flatMap(rowOf(tenantId, p.ledger, p.rowId), tx.rowAsPending) : undefined
            const allowed = row === undefined ? undefined : rowActionAllowed(
              { id: task.id, status: task.status, currentStep: task.current_step },
              yield* Effect.orElseSucceed(runbookOf(task.workflow_id), () => null),
              row.task_id
            )
            if (allowed?._tag === "notFound") return yield* fromDecision(allowed, `${what} of task ${task.id}`)
            // A decision link's: on a step that requires a claim, taken for its person first (./claims.ts).
            yield* claimBeforeDecision(tx, tenantId, task, signal, who)
            // Bound to the step its request saw (../../domain/engine.ts): decisions still in the outbox count as taken.
            const bound = yield* accept(tenantId, signal, who)
            if (bound === undefined) return
            if (row !== undefined) {
              if (allowed !== undefined && allowed._tag !== "ok") yield* fromDecision(allowed, `${what} of task ${task.id}`)
              if (p.action === "reject_row") yield* fromDecision(decideReject(p.ledger, row.status), what)
              else if (p.action === "resolve_flag") yield* fromDecision(decideResolve(p.ledger, row.status), what)
              else {
                yield* fromDecision(decideEdit(p.ledger, row.status, p.field ?? "", p.value ?? null), what)
                if (p.expected !== undefined) yield* tx.checkExpected(row, p.field ?? "", p.expected)
              }
            }
            yield* outbox.record([signalFor(tenantId, bound, signal, who)])
          }))
        ).pipe((self) => Effect.andThen(letArrivalsIn(who), self)))
  }
}
