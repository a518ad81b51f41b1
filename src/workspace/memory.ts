/**
 * An in-memory workspace: the reference implementation of the WorkspaceClient port, seeded
 * from a fixture. Tests use it as the fake (with failure injection); benchmarks use it as
 * the zero-cost upstream. Signals go to a log and are applied right after the write, as the
 * embedded store's outbox does after its commit.
 */
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { BadRequest, Conflict, Forbidden, NotFound, type UpstreamError } from "../api/errors.js"
import { rootTaskId } from "../api/ids.js"
import { eventSize, eventsWithinBytes, timelinePage } from "../api/eventPaging.js"
import type { CreatedTask, Scalar, TaskEvent } from "../api/resources.js"
import { currentIdempotencyKey, type WorkspaceClientService } from "../upstream/WorkspaceClient.js"
import { type Fixture, fixtureOrigin } from "../domain/fixture.js"
import { resolveExternalRef } from "../domain/agentRef.js"
import { hashApiKey, sameKeyHash } from "../domain/apiKeys.js"
import type { Agent } from "../upstream/registry.js"
import { decideEdit, decideReject, decideResolve, type RowDecision } from "../domain/ledgers.js"
import { type Workspace, wholeBytes } from "../upstream/model.js"
import {
  acceptSignal,
  advanceHistory,
  refusalOf,
  applyToTask,
  audit,
  ENGINE_EVENT_SOURCE,
  type EngineEvent,
  engineEventsOf,
  historyStart,
  newTask,
  type PendingSignal,
  rowActionAllowed,
  sameEvent,
  type StepHistory,
  cellMoved,
  claimEvent,
  lastEditorOf,
  waitingEvent
} from "../domain/engine.js"
import { type Caller, type Claim, claimDecision, claimOn, releaseRefusal } from "../domain/assignment.js"
import { inboxItemOf, selectSteps } from "../domain/inbox.js"
import type { InboxItem } from "../api/inbox.js"
import { type Attribution, attributionNow } from "../services/Actor.js"
import { preciseNowMs } from "../lib/preciseClock.js"
import { TaskEventBell } from "../services/TaskEventBell.js"
import { decodeResult, encodeResult, keyReused, writeFingerprint } from "../domain/idempotency.js"
import { DEFAULT_GL_SESSION_TTL_MS, glSessionCutoff, unknownGlService } from "../domain/glServices.js"
import { nextStepOf, tableLedgerOf, tableRowOf, withTableRows } from "../domain/runbook.js"
import { selectTasks } from "./taskQuery.js"

interface Row {
  ledger: string
  id: string
  tenantId: string
  entityId: string
  taskId: string | null
  status: string
  fields: Record<string, Scalar>
}

export interface SignalRecord extends Workspace.Signal {
  readonly rootTaskId: string
  readonly tenantId: string
  readonly at: string
}

/** Failure injection for tests: return an error to fail that call, undefined to let it through. */
export interface Faults {
  nextStep?: (taskId: string) => UpstreamError | NotFound | undefined
  runbook?: (workflowId: string) => UpstreamError | NotFound | undefined
  all?: () => UpstreamError | undefined
  /** Milliseconds every getNextStep waits (benchmarks: a slow upstream lookup). */
  nextStepDelayMs?: number
}

export interface MemoryWorkspace extends WorkspaceClientService {
  readonly signals: Array<SignalRecord>
  readonly faults: Faults
  readonly tasks: Map<string, MutableTask>
  readonly completeGlSession: (consumerId: string, service: string) => boolean
  readonly calls: Map<string, number>
}

type MutableTask = { -readonly [K in keyof Workspace.Task]: Workspace.Task[K] }

const now = () => new Date().toISOString()

const callerOf = (who: Attribution): Caller => ({ actor: who.actor, groups: who.groups ?? [], enforced: who.enforced === true })

export interface MemoryWorkspaceOptions {
  /** A GL connect session older than this cannot be completed; default 15 minutes. */
  readonly glSessionTtlMs?: number | undefined
}

export const makeMemoryWorkspace = (fixture: Fixture, options: MemoryWorkspaceOptions = {}): MemoryWorkspace => {
  const tenants = new Map(fixture.tenants.map((t) => [t.id, { ...t }]))
  const entities = new Map(fixture.entities.map((e) => [e.id, { ...e }]))
  const workflows = new Map(fixture.workflows.map((w) => [w.id, w]))
  const tasks = new Map<string, MutableTask>()
  const snapshots = new Map<string, Record<string, unknown>>()
  /** When each task's steps became current (../domain/engine.ts stepAt); fixture tasks start with none. */
  const histories = new Map<string, StepHistory>()
  /** When each task's current step became current (ISO): the inbox's order; fixture tasks: their creation. */
  const waitingSince = new Map<string, string>()
  /** Each task's claim (../domain/assignment.ts), valid while it names the current step. */
  const claims = new Map<string, Claim>()
  for (const { snapshots: snaps, ...t } of fixture.tasks) {
    tasks.set(t.id, t)
    snapshots.set(t.id, { ...snaps })
    waitingSince.set(t.id, t.createdAt)
  }
  const rows = new Map<string, Row>(fixture.subledgerRows.map((r) => [`${r.ledger}/${r.id}`, { ...r, fields: { ...r.fields } }]))
  const documents = new Map<string, Workspace.Document & { bytes: Uint8Array }>()
  for (const d of fixture.documents) {
    const bytes = Buffer.from(d.dataBase64, "base64")
    documents.set(d.id, {
      id: d.id, tenantId: d.tenantId, taskId: d.taskId, source: d.source, filename: d.filename,
      contentType: d.contentType, uploadedAt: d.uploadedAt, sizeBytes: bytes.length, bytes
    })
  }
  // The store's order: one counter for every task's events (positions as the SQLite store writes them).
  let lastPosition = 0
  const nextPosition = () => String(++lastPosition)
  const events: Array<TaskEvent> = [...fixture.events].sort((a, b) => a.seq - b.seq).map((e) => ({
    ...e,
    createdAt: e.createdAt ?? now(),
    position: nextPosition(),
    origin: fixtureOrigin(e)
  }))
  const gl = new Map(fixture.glConnections.map((g) => [g.tenantId, g]))
  const agents = (fixture.agents ?? []).map(({ apiKey, ...a }) => ({
    keyHash: hashApiKey(apiKey),
    agent: {
      ...a,
      externalRef: Effect.runSync(Effect.orElseSucceed(resolveExternalRef(a.kind, a.externalRef), () => a.externalRef)),
      createdAt: now(),
      versions: []
    } satisfies Agent
  }))
  const glSessions = new Map<string, { tenantId: string; serviceId: string | undefined; createdAt: string }>()
  const glSessionTtlMs = options.glSessionTtlMs ?? DEFAULT_GL_SESSION_TTL_MS
  const records = new Map<string, Array<unknown>>()
  const signals: Array<SignalRecord> = []
  const faults: Faults = {}
  const calls = new Map<string, number>()
  const bell = Effect.runSync(TaskEventBell)

  /** Every call: counted, and failed first when a fault says so. */
  const call = <A, E>(name: string, body: () => Effect.Effect<A, E>): Effect.Effect<A, E | UpstreamError> =>
    Effect.suspend(() => {
      calls.set(name, (calls.get(name) ?? 0) + 1)
      const fault = faults.all?.()
      return fault !== undefined ? Effect.fail(fault) : body() as Effect.Effect<A, E | UpstreamError>
    })

  /**
   * Idempotent writes (../upstream/WorkspaceClient.ts): results by tenant and key, oldest
   * dropped past MAX_KEYS (benchmarks write without end). Writes run one at a time, like the
   * embedded store's transactions, so a check and its write are never interleaved with another.
   */
  const keys = new Map<string, { readonly fingerprint: string; readonly result: string | null }>()
  const MAX_KEYS = 100_000
  const writeLock = Semaphore.makeUnsafe(1)
  const idempotent = <A, E>(
    tenantId: string,
    fingerprintOf: Effect.Effect<string>,
    body: () => Effect.Effect<A, E>
  ): Effect.Effect<A, E | Conflict> =>
    Effect.flatMap(Effect.service(currentIdempotencyKey), (key): Effect.Effect<A, E | Conflict> => {
      if (Option.isNone(key)) return writeLock.withPermits(1)(Effect.suspend(body))
      const id = `${tenantId}\u0000${key.value}`
      return Effect.flatMap(fingerprintOf, (fingerprint) =>
        writeLock.withPermits(1)(Effect.suspend((): Effect.Effect<A, E | Conflict> => {
          const stored = keys.get(id)
          if (stored !== undefined) {
            return stored.fingerprint === fingerprint ? Effect.sync(() => decodeResult<A>(stored.result)) : Effect.fail(keyReused(key.value))
          }
          return Effect.tap(body(), (result) =>
            Effect.sync(() => {
              keys.set(id, { fingerprint, result: encodeResult(result) })
              if (keys.size > MAX_KEYS) keys.delete(keys.keys().next().value!)
            }))
        })))
    })

  const notFound = (what: string) => Effect.fail(new NotFound({ message: `${what} not found` }))

  const taskOf = (tenantId: string, taskId: string) => {
    const task = tasks.get(rootTaskId(taskId))
    return task !== undefined && task.tenantId === tenantId ? Effect.succeed(task) : notFound(`Task ${taskId}`)
  }

  const runbookOf = (workflowId: string) => {
    const runbook = workflows.get(workflowId)?.runbook
    return runbook == null ? notFound(`Runbook of workflow ${workflowId}`) : Effect.succeed(runbook)
  }

  const nextStepNow = (tenantId: string, taskId: string) =>
    Effect.gen(function*() {
      const fault = faults.nextStep?.(taskId)
      if (fault !== undefined) return yield* Effect.fail(fault)
      const task = yield* taskOf(tenantId, taskId)
      const runbook = yield* runbookOf(task.workflowId)
      return withRowsOf(tenantId, task.id, nextStepOf(task, runbook, snapshots.get(task.id) ?? {}))
    })

  /** A TABLE_REVIEW step's args carry the rows it reviews (../domain/runbook.ts withTableRows). */
  const withRowsOf = (tenantId: string, taskId: string, next: Workspace.NextStep): Workspace.NextStep => {
    const ledger = next.step === null ? undefined : tableLedgerOf(next.step)
    if (ledger === undefined) return next
    const taskRows = [...rows.values()]
      .filter((r) => r.taskId === taskId && r.ledger === ledger && r.tenantId === tenantId)
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    return withTableRows(next, taskRows.map((r) => tableRowOf(ledger, { id: r.id, status: r.status, fields: { ...r.fields } })))
  }

  /** getNextStep's answer without a fiber, null where it would fail (the batch's per-task rule). */
  const nextStepOrNull = (tenantId: string, taskId: string): Workspace.NextStep | null => {
    if (faults.nextStep?.(taskId) !== undefined) return null
    const task = tasks.get(rootTaskId(taskId))
    if (task === undefined || task.tenantId !== tenantId) return null
    const runbook = workflows.get(task.workflowId)?.runbook
    return runbook == null ? null : withRowsOf(tenantId, task.id, nextStepOf(task, runbook, snapshots.get(task.id) ?? {}))
  }

  const fromDecision = <A>(d: RowDecision<A>, what: string): Effect.Effect<A, NotFound | BadRequest> =>
    d._tag === "ok"
      ? Effect.succeed(d.value)
      : d._tag === "notFound"
      ? notFound(what)
      : Effect.fail(new BadRequest({
        message: d.message,
        ...(d.currentStatus !== undefined ? { currentStatus: d.currentStatus } : {}),
        ...(d.code !== undefined ? { code: d.code } : {})
      }))

  const rowOf = (tenantId: string, ledger: string, rowId: string) => {
    const row = rows.get(`${ledger}/${rowId}`)
    return row !== undefined && row.tenantId === tenantId ? Effect.succeed(row) : notFound(`Row ${rowId} in ${ledger}`)
  }

  /** Appends the gateway's own events to a task's timeline: marked as such, seq = position. */
  const appendToTimeline = (taskId: string, written: ReadonlyArray<EngineEvent>) => {
    if (written.length === 0) return
    for (const e of written) {
      const position = nextPosition()
      events.push({
        taskId, type: e.type, source: e.source ?? ENGINE_EVENT_SOURCE, seq: Number(position), payload: e.payload,
        createdAt: now(), position, origin: "gateway"
      })
    }
    bell.ring(taskId)
  }

  /** A source's event at `seq` (the next of the source when undefined): its seqs are its own. */
  const appendToSource = (
    taskId: string,
    fields: {
      readonly type: string
      readonly source: string
      readonly sourceLabel?: string | undefined
      readonly payload: Record<string, unknown>
      readonly groupKey?: string | undefined
    },
    origin: "producer" | "agent",
    seq: number | undefined
  ): Effect.Effect<TaskEvent, Conflict> => {
    const own = events.filter((e) => e.taskId === taskId && e.source === fields.source && e.origin !== "gateway")
    const at = seq ?? own.reduce((next, e) => (e.seq >= next ? e.seq + 1 : next), 0)
    const existing = own.find((e) => e.seq === at)
    if (existing !== undefined) {
      return sameEvent(existing, fields)
        ? Effect.succeed(existing)
        : Effect.fail(new Conflict({ message: `seq ${at} of source ${JSON.stringify(fields.source)} is already taken by a different event` }))
    }
    // In TaskEvent's key order, as the embedded store reads it: the stream's frames are the JSON GET /events answers.
    const { groupKey, payload, sourceLabel, ...head } = fields
    const event: TaskEvent = {
      taskId, ...head, ...(sourceLabel !== undefined ? { sourceLabel } : {}), seq: at, payload,
      ...(groupKey !== undefined ? { groupKey } : {}), createdAt: now(), position: nextPosition(), origin
    }
    events.push(event)
    bell.ring(taskId)
    return Effect.succeed(event)
  }

  /** A row change on the timeline of the row's task (none for a row of no task). */
  const auditRow = (row: Row, event: EngineEvent) => {
    if (row.taskId !== null && tasks.has(row.taskId)) appendToTimeline(row.taskId, [event])
  }

  const rejectRow = (tenantId: string, ledger: string, rowId: string, via: "row_action" | "direct" = "direct", stepId: string | null = null) =>
    Effect.flatMap(Effect.zip(rowOf(tenantId, ledger, rowId), attributionNow), ([row, who]) =>
      Effect.map(fromDecision(decideReject(ledger, row.status), `Row ${rowId} in ${ledger}`), (newStatus) => {
        const previous = row.status
        row.status = newStatus
        auditRow(row, audit.rowRejected(row, previous, newStatus, via, who, stepId))
        return { status: "OK" as const, rowId, newStatus }
      }))

  /** The `resolve_flag` row action: a flagged row marked resolved. */
  const resolveRow = (tenantId: string, ledger: string, rowId: string, stepId: string | null) =>
    Effect.flatMap(Effect.zip(rowOf(tenantId, ledger, rowId), attributionNow), ([row, who]) =>
      Effect.map(fromDecision(decideResolve(ledger, row.status), `Row ${rowId} in ${ledger}`), (newStatus) => {
        const previous = row.status
        row.status = newStatus
        auditRow(row, audit.rowResolved(row, previous, newStatus, who, stepId))
      }))

  const updateRow = (
    tenantId: string,
    ledger: string,
    rowId: string,
    field: string,
    value: Scalar,
    via: "row_action" | "direct" = "direct",
    stepId: string | null = null,
    expected: Option.Option<Scalar> = Option.none()
  ) =>
    Effect.flatMap(Effect.zip(rowOf(tenantId, ledger, rowId), attributionNow), ([row, who]) =>
      Effect.map(Effect.andThen(fromDecision(decideEdit(ledger, row.status, field, value), `Row ${rowId} in ${ledger}`), (coerced) =>
        Option.isSome(expected) && cellMoved(row.fields[field], { expected: expected.value })
          ? Effect.fail(new Conflict({
            message: `Field "${field}" of row ${rowId} is ${JSON.stringify(row.fields[field] ?? null)} now, not ${JSON.stringify(expected.value)} as the editor saw`,
            currentValue: row.fields[field] ?? null,
            changedBy: lastEditorOf(events.filter((e) => e.taskId === row.taskId).reverse(), rowId, field)
          }))
          : Effect.succeed(coerced)), (coerced) => {
        const old = row.fields[field]
        row.fields[field] = coerced
        auditRow(row, audit.cellEdited(row, field, old, coerced, via, who, stepId))
        return { status: "OK" as const, rowId, field, value: coerced }
      }))

  /**
   * Whether the task takes the signal, by the engine's one rule (../domain/engine.ts acceptSignal):
   * bound to the step current when its request arrived. Fails with what the caller must hear;
   * succeeds with the signal bound to its step and attributed, or undefined for a duplicate.
   */
  const accept = (task: Workspace.Task, signal: Workspace.Signal) =>
    Effect.flatMap(attributionNow, (who): Effect.Effect<PendingSignal | undefined, Conflict | Forbidden | BadRequest> => {
      const accepted = acceptSignal(task, snapshots.get(task.id) ?? {}, signal, [], {
        arrivedAt: who.arrivedAt,
        actor: who.actor,
        groups: who.groups,
        enforced: who.enforced,
        claim: claims.get(task.id) ?? null,
        history: histories.get(task.id),
        runbook: workflows.get(task.workflowId)?.runbook ?? null
      })
      const refused = refusalOf(accepted)
      if (refused !== undefined) return Effect.fail(refused)
      return Effect.succeed(accepted._tag !== "record" ? undefined : {
        name: signal.name,
        payload: signal.payload,
        expectedStep: accepted.expectedStep,
        actor: who.actor ?? null,
        requestId: who.requestId ?? null
      })
    })

  /** The runbook engine (../domain/engine.ts), applied as soon as the signal is recorded. */
  const apply = (task: MutableTask, signal: PendingSignal) => {
    const outcome = applyToTask(task, workflows.get(task.workflowId)?.runbook ?? null, snapshots.get(task.id) ?? {}, signal, now())
    if (outcome._tag === "changed") {
      const at = now()
      const moved = outcome.currentStep !== task.currentStep
      const waiting = moved ? waitingEvent(workflows.get(task.workflowId)?.runbook ?? null, outcome.currentStep, at) : undefined
      appendToTimeline(task.id, [...engineEventsOf(task, signal, outcome), ...(waiting !== undefined ? [waiting] : [])])
      if (moved) {
        waitingSince.set(task.id, at)
        claims.delete(task.id)
      }
      task.status = outcome.status
      task.currentStep = outcome.currentStep
      snapshots.set(task.id, outcome.snapshots)
      histories.set(task.id, advanceHistory(histories.get(task.id) ?? [], outcome.currentStep, preciseNowMs()))
    }
  }

  const emit = (tenantId: string, taskId: string, signal: PendingSignal) => {
    const task = tasks.get(rootTaskId(taskId))!
    signals.push({
      taskId,
      name: signal.name,
      payload: signal.payload,
      ...(signal.expectedStep !== null ? { expectedStep: signal.expectedStep } : {}),
      rootTaskId: task.id,
      tenantId,
      at: now()
    })
    apply(task, signal)
  }

  const service: MemoryWorkspace = {
    signals,
    faults,
    tasks,
    calls,
    completeGlSession: (consumerId, svc) => {
      const session = glSessions.get(consumerId)
      if (session === undefined || session.createdAt <= glSessionCutoff(glSessionTtlMs)) return false
      gl.set(session.tenantId, {
        tenantId: session.tenantId, provider: "local", service: svc, status: "ACTIVE", connectedAt: now(),
        metadata: { name: `Local ${svc}`, service: svc, updated_at: now() }
      })
      glSessions.delete(consumerId)
      return true
    },
    resolveTenant: (slug) =>
      call("resolveTenant", () => {
        const t = [...tenants.values()].find((t) => t.slug === slug)
        return t === undefined ? notFound(`Tenant ${slug}`) : Effect.succeed(t)
      }),
    listEntities: (tenantId) =>
      call("listEntities", () => Effect.succeed([...entities.values()].filter((e) => e.tenantId === tenantId))),
    getEntity: (tenantId, entityId) =>
      call("getEntity", () => {
        const e = entities.get(entityId)
        return e !== undefined && e.tenantId === tenantId ? Effect.succeed(e) : notFound(`Entity ${entityId}`)
      }),
    listTasks: (tenantId, entityId, query) =>
      call("listTasks", () => {
        const all = [...tasks.values()].filter((t) => t.tenantId === tenantId && t.entityId === entityId)
        if (query === undefined) return Effect.succeed(all)
        const selected = selectTasks(all, query)
        return typeof selected === "string" ? Effect.fail(new BadRequest({ message: selected })) : Effect.succeed(selected)
      }),
    getTask: (taskId) =>
      call("getTask", () => {
        const t = tasks.get(rootTaskId(taskId))
        return t === undefined ? notFound(`Task ${taskId}`) : Effect.succeed({ ...t })
      }),
    getNextStep: (tenantId, taskId) =>
      call("getNextStep", () =>
        Effect.gen(function*() {
          if (faults.nextStepDelayMs !== undefined) yield* Effect.sleep(faults.nextStepDelayMs)
          return yield* nextStepNow(tenantId, taskId)
        })),
    // One round trip (one delay) for the whole batch; each task answers on its own.
    getNextSteps: (tenantId, taskIds) =>
      call("getNextSteps", () =>
        Effect.gen(function*() {
          if (faults.nextStepDelayMs !== undefined) yield* Effect.sleep(faults.nextStepDelayMs)
          return taskIds.map((taskId): Workspace.NextStepOf => ({ taskId, nextStep: nextStepOrNull(tenantId, taskId) }))
        })),
    listWorkflows: (tenantId) =>
      call("listWorkflows", () =>
        Effect.succeed(
          [...workflows.values()]
            .filter((w) => w.tenantId === null || w.tenantId === tenantId)
            .map(({ id, name, tenantId }) => ({ id, name, tenantId }))
        )),
    getRunbook: (tenantId, workflowId) =>
      call("getRunbook", () => {
        const fault = faults.runbook?.(workflowId)
        if (fault !== undefined) return Effect.fail(fault)
        const wf = workflows.get(workflowId)
        if (wf === undefined || (wf.tenantId !== null && wf.tenantId !== tenantId)) return notFound(`Workflow ${workflowId}`)
        return runbookOf(workflowId)
      }),
    createTask: (tenantId, entityId, input) =>
      call("createTask", () => idempotent(tenantId, writeFingerprint.createTask(entityId, input), (): Effect.Effect<CreatedTask, NotFound | BadRequest> => {
        const entity = entities.get(entityId)
        if (entity === undefined || entity.tenantId !== tenantId) return notFound(`Entity ${entityId}`)
        const wf = workflows.get(input.workflowId)
        if (wf === undefined || (wf.tenantId !== null && wf.tenantId !== tenantId)) {
          return Effect.fail(new BadRequest({ message: `workflowId: unknown workflow "${input.workflowId}"` }))
        }
        const task = newTask({ id: randomUUID(), tenantId, entityId, createdAt: now() }, { ...wf, runbook: wf.runbook ?? null }, input.context)
        return Effect.map(attributionNow, (who) => {
          tasks.set(task.id, task)
          snapshots.set(task.id, {})
          histories.set(task.id, historyStart(task.currentStep, preciseNowMs()))
          waitingSince.set(task.id, task.createdAt)
          const waiting = waitingEvent(wf.runbook ?? null, task.currentStep, task.createdAt)
          appendToTimeline(task.id, [audit.taskCreated(task, input.context, who), ...(waiting !== undefined ? [waiting] : [])])
          return { ...task, context: input.context }
        })
      })),
    getSnapshots: (tenantId, taskId) =>
      call("getSnapshots", () => Effect.map(taskOf(tenantId, taskId), (t) => ({ ...snapshots.get(t.id) }))),
    signal: (tenantId, signal) =>
      call("signal", () =>
        idempotent(tenantId, writeFingerprint.signal(signal), () =>
          Effect.gen(function*() {
            const task = yield* taskOf(tenantId, signal.taskId)
            const rowAction = signal.name === "user_action" && signal.payload.kind === "row_action"
            const p = signal.payload as { ledger: string; action: string; rowId: string; field?: string; value?: Scalar; expected?: Scalar }
            const row = rowAction ? yield* rowOf(tenantId, p.ledger, p.rowId) : undefined
            const allowed = row === undefined ? undefined : rowActionAllowed(task, workflows.get(task.workflowId)?.runbook ?? null, row.taskId)
            const what = `Row ${p.rowId} in ${p.ledger} of task ${task.id}`
            if (allowed?._tag === "notFound") return yield* fromDecision(allowed, what)
            const bound = yield* accept(task, signal)
            if (bound === undefined) return
            if (rowAction) {
              if (allowed !== undefined && allowed._tag !== "ok") yield* fromDecision(allowed, what)
              if (p.action === "reject_row") yield* rejectRow(tenantId, p.ledger, p.rowId, "row_action", bound.expectedStep)
              else if (p.action === "resolve_flag") yield* resolveRow(tenantId, p.ledger, p.rowId, bound.expectedStep)
              else {
                yield* updateRow(
                  tenantId,
                  p.ledger,
                  p.rowId,
                  p.field ?? "",
                  p.value ?? null,
                  "row_action",
                  bound.expectedStep,
                  p.expected !== undefined ? Option.some(p.expected) : Option.none()
                )
              }
            }
            emit(tenantId, signal.taskId, bound)
          }))),
    appendEvent: (tenantId, taskId, dto) =>
      call("appendEvent", () =>
        idempotent(tenantId, writeFingerprint.appendEvent(taskId, dto), () =>
          Effect.flatMap(taskOf(tenantId, taskId), () => {
            const { seq, ...fields } = dto
            return appendToSource(taskId, fields, "producer", seq)
          }))),
    recordEvent: (tenantId, taskId, record) =>
      call("recordEvent", () =>
        idempotent(tenantId, writeFingerprint.recordEvent(taskId, record), () =>
          Effect.flatMap(taskOf(tenantId, taskId), () => {
            const { origin, seq, ...fields } = record
            if (origin === "agent") return appendToSource(taskId, fields, "agent", seq)
            const position = nextPosition()
            const event: TaskEvent = { taskId, ...fields, seq: Number(position), createdAt: now(), position, origin: "gateway" }
            events.push(event)
            bell.ring(taskId)
            return Effect.succeed(event)
          }))),
    listEvents: (tenantId, taskId, page = {}) =>
      call("listEvents", () =>
        Effect.map(taskOf(tenantId, taskId), () => {
          const after = page.after !== undefined ? Number(page.after) : undefined
          const all = events.filter((e) => e.taskId === taskId && (after === undefined || Number(e.position) > after))
          const limited = page.limit !== undefined ? all.slice(0, page.limit) : all
          const n = page.maxBytes !== undefined ? eventsWithinBytes(limited.map(eventSize), page.maxBytes) : limited.length
          return timelinePage(limited.slice(0, n), all.length > n)
        })),
    listDocuments: (tenantId, taskId, query) =>
      call("listDocuments", () =>
        Effect.succeed(
          [...documents.values()]
            .filter((d) => d.tenantId === tenantId && d.taskId === rootTaskId(taskId) && (query.source === undefined || d.source === query.source))
            .reverse() // later inserts first among equal timestamps
            .sort((a, b) => Date.parse(b.uploadedAt) - Date.parse(a.uploadedAt))
            .slice(0, query.limit)
            .map(({ bytes: _, ...doc }) => doc)
        )),
    putDocument: (tenantId, doc, signal) =>
      call("putDocument", () =>
        idempotent(tenantId, writeFingerprint.putDocument(doc, Option.getOrNull(signal)), () => Effect.gen(function*() {
          yield* taskOf(tenantId, doc.taskId)
          const bytes = yield* wholeBytes(doc.bytes)
          const bound = Option.isSome(signal) ? yield* accept(yield* taskOf(tenantId, signal.value.taskId), signal.value) : undefined
          const who = yield* attributionNow
          const stored = {
            id: randomUUID(), tenantId, taskId: rootTaskId(doc.taskId), source: doc.source, filename: doc.filename,
            contentType: doc.contentType, sizeBytes: doc.bytes.length, uploadedAt: now(),
            ...(doc.period !== undefined ? { period: doc.period } : {}),
            ...(doc.schemaSlug !== undefined ? { schemaSlug: doc.schemaSlug } : {}),
            bytes
          }
          documents.set(stored.id, stored)
          const { bytes: _, ...meta } = stored
          appendToTimeline(stored.taskId, [audit.fileStored(meta, Option.isSome(signal) ? signal.value.name : null, who)])
          if (Option.isSome(signal) && bound !== undefined) {
            emit(tenantId, signal.value.taskId, { ...bound, payload: { ...bound.payload, documentRef: stored.id } })
          }
          return meta
        }))),
    openDocument: (tenantId, documentId) =>
      call("openDocument", () => {
        const d = documents.get(documentId)
        if (d === undefined || d.tenantId !== tenantId) return notFound(`Document ${documentId}`)
        const { bytes, ...document } = d
        return Effect.succeed({ document, body: Stream.succeed(bytes) })
      }),
    ingestData: (tenantId, batch, signal) =>
      call("ingestData", () =>
        idempotent(tenantId, writeFingerprint.ingestData(batch, Option.getOrNull(signal)), () => Effect.gen(function*() {
          const task = yield* taskOf(tenantId, batch.taskId)
          const bound = Option.isSome(signal)
            ? yield* accept(yield* taskOf(tenantId, signal.value.taskId), { ...signal.value, payload: {} })
            : undefined
          const who = yield* attributionNow
          const stored = batch.rows.map((row) => ({ id: randomUUID(), kind: batch.kind, ...row, at: now() }))
          const list = records.get(batch.taskId) ?? []
          list.push(...stored)
          records.set(batch.taskId, list)
          appendToTimeline(task.id, [
            audit.dataIngested(batch.taskId, batch.kind ?? null, stored.map((r) => r.id), Option.isSome(signal) ? signal.value.name : null, who)
          ])
          return stored.map((r) => {
            if (Option.isSome(signal) && bound !== undefined) {
              emit(tenantId, signal.value.taskId, { ...bound, payload: { rowId: r.id, kind: batch.kind ?? null, taskId: batch.taskId } })
            }
            return { id: r.id, signaled: Option.isSome(signal) }
          })
        }))),
    rejectRow: (tenantId, ledger, rowId) =>
      call("rejectRow", () => idempotent(tenantId, writeFingerprint.rejectRow(ledger, rowId), () => rejectRow(tenantId, ledger, rowId))),
    updateRow: (tenantId, ledger, rowId, field, value, expected = Option.none()) =>
      call("updateRow", () =>
        idempotent(
          tenantId,
          writeFingerprint.updateRow(ledger, rowId, field, value, Option.isSome(expected) ? { value: expected.value } : undefined),
          () => updateRow(tenantId, ledger, rowId, field, value, "direct", null, expected)
        )),
    getGlConnection: (tenantId) => call("getGlConnection", () => Effect.succeed(Option.fromNullishOr(gl.get(tenantId)))),
    createGlSession: (tenantId, serviceId) =>
      call("createGlSession", () => idempotent(tenantId, writeFingerprint.createGlSession(serviceId), (): Effect.Effect<{ sessionUrl: string; consumerId: string }, NotFound | BadRequest> => {
        const unknown = serviceId === undefined ? undefined : unknownGlService(serviceId)
        if (unknown !== undefined) return Effect.fail(new BadRequest({ message: unknown }))
        if (!tenants.has(tenantId)) return notFound(`Tenant ${tenantId}`)
        const consumerId = randomUUID()
        glSessions.set(consumerId, { tenantId, serviceId, createdAt: now() })
        return Effect.succeed({ sessionUrl: `http://localhost/workspace/gl/connect/${consumerId}`, consumerId })
      })),
    deleteGlConnection: (tenantId) =>
      call("deleteGlConnection", () =>
        idempotent(tenantId, writeFingerprint.deleteGlConnection(), () => Effect.sync(() => void gl.delete(tenantId)))),
    inbox: (tenantId, query) =>
      call("inbox", () =>
        Effect.map(attributionNow, (who) => {
          const caller = callerOf(who)
          const flows = [...workflows.values()].filter((w) => w.tenantId === null || w.tenantId === tenantId)
            .map((w) => ({ id: w.id, runbook: w.runbook ?? null }))
          const selected = selectSteps(flows, query, caller)
          const picked = selected === undefined ? undefined : new Map(selected.map((s) => [`${s.workflowId}\u0000${s.stepId}`, s]))
          const after = query.after
          const waiting = [...tasks.values()]
            .filter((t) => {
              if (t.tenantId !== tenantId || t.status !== "IN_PROGRESS" || t.currentStep === null) return false
              if (query.entityId !== undefined && t.entityId !== query.entityId) return false
              if (query.workflowId !== undefined && t.workflowId !== query.workflowId) return false
              const since = waitingSince.get(t.id) ?? t.createdAt
              if (picked !== undefined) {
                const s = picked.get(`${t.workflowId}\u0000${t.currentStep}`)
                if (s === undefined || (s.overdueBefore !== undefined && !(since < s.overdueBefore))) return false
              }
              return after === undefined || since > after.waitingSince || (since === after.waitingSince && t.id > after.taskId)
            })
            .map((t) => ({ t, since: waitingSince.get(t.id) ?? t.createdAt }))
            .sort((a, b) => (a.since < b.since ? -1 : a.since > b.since ? 1 : a.t.id < b.t.id ? -1 : a.t.id > b.t.id ? 1 : 0))
          const page = waiting.slice(0, query.limit)
          const items = page.flatMap(({ since, t }): Array<InboxItem> => {
            const item = inboxItemOf(
              { task: t, entityName: entities.get(t.entityId)?.name ?? "", waitingSince: since, claim: claims.get(t.id) ?? null },
              workflows.get(t.workflowId)?.runbook ?? null,
              caller,
              query.now
            )
            return item === undefined ? [] : [item]
          })
          const last = page[page.length - 1]
          return {
            items,
            more: waiting.length > query.limit,
            ...(last !== undefined ? { last: { waitingSince: last.since, taskId: last.t.id } } : {})
          }
        })),
    claimStep: (tenantId, taskId, override) =>
      call("claimStep", () =>
        Effect.flatMap(attributionNow, (who) =>
          writeLock.withPermits(1)(Effect.gen(function*() {
            const task = yield* taskOf(tenantId, taskId)
            if (task.currentStep === null || task.status !== "IN_PROGRESS") {
              return yield* Effect.fail(new BadRequest({ message: `Task is ${task.status} with no step to claim`, currentStatus: task.status }))
            }
            const stepId = task.currentStep
            const step = workflows.get(task.workflowId)?.runbook?.steps.find((s) => s.id === stepId) ?? { id: stepId }
            const current = claimOn(claims.get(task.id), stepId)
            const decided = claimDecision(step, callerOf(who), current, override)
            if (decided._tag === "forbidden") return yield* Effect.fail(new Forbidden({ message: decided.message }))
            if (decided._tag === "conflict") return yield* Effect.fail(new Conflict({ message: decided.message }))
            if (decided._tag === "held") return { ...current! }
            const claim: Claim = { stepId, by: who.actor!, at: now(), override: decided.override }
            claims.set(task.id, claim)
            appendToTimeline(task.id, [claimEvent("claimed", claim, who)])
            return { ...claim }
          })))),
    releaseClaim: (tenantId, taskId) =>
      call("releaseClaim", () =>
        Effect.flatMap(attributionNow, (who) =>
          writeLock.withPermits(1)(Effect.gen(function*() {
            const task = yield* taskOf(tenantId, taskId)
            const current = claimOn(claims.get(task.id), task.currentStep)
            if (current === undefined) return
            const refused = releaseRefusal(current, callerOf(who))
            if (refused !== undefined) return yield* Effect.fail(new Forbidden({ message: refused }))
            claims.delete(task.id)
            appendToTimeline(task.id, [claimEvent("released", current, who)])
          })))),
    findAgentByKeyHash: (tenantId, keyHash) =>
      call("findAgentByKeyHash", () => {
        // Every agent is compared, in constant time, whatever matches: no early exit to time.
        let found: Agent | undefined
        for (const a of agents) if (sameKeyHash(a.keyHash, keyHash) && a.agent.tenantId === tenantId) found = a.agent
        return found === undefined
          ? Effect.fail(new NotFound({ message: "No agent of this tenant holds this API key" }))
          : Effect.succeed(found)
      })
  }
  return service
}
