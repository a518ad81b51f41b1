/**
 * What every part of the embedded store shares: SQL error policy (busy retries, then a
 * generic 503 that never carries SQL text), JSON columns, and the row shapes read back.
 */
import type * as SqlClient from "effect/sql/SqlClient"
import { SqlError, UnknownError } from "effect/sql/SqlError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { ServiceUnavailable } from "../../api/errors.js"
import { timeSlice } from "../../lib/eventLoop.js"
import type { Scalar, TaskEvent } from "../../api/resources.js"
import { positionOf } from "../../api/eventPaging.js"
import { isSpooled, Runbook, type SpooledBytes, type Workspace } from "../../upstream/model.js"
import type { Claim } from "../../domain/assignment.js"
import { defaultOf } from "../../config/settings.js"
import { parseJson } from "../../api/jsonParse.js"
import type { StepEntry, StepHistory } from "../../domain/engine.js"

export const nowIso = () => new Date().toISOString()

export const isSqlError = (u: unknown): u is SqlError =>
  typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "SqlError"

/**
 * What the driver threw for a SqlError (effect/sql wraps it in a classified reason:
 * `error.reason.cause`), or the value itself.
 */
export const driverCause = (u: unknown): unknown => (isSqlError(u) ? u.reason.cause : u)

/** The driver's own words for a failure (e.g. "SQLITE_CONSTRAINT: ..."), for logs and startup errors. */
export const describeError = (u: unknown): string => {
  const inner = driverCause(u)
  if (inner instanceof Error) return inner.message
  if (typeof inner === "object" && inner !== null && typeof (inner as { message?: unknown }).message === "string") {
    return (inner as { message: string }).message
  }
  if (isSqlError(u)) return u.message
  return String(inner)
}

/**
 * SQLITE_BUSY: another connection (usually another process on the same file) holds the write
 * lock. SQLite itself never waits (busy_timeout 0, ./libsql.ts: its wait is a sleep on the
 * event loop's thread); the wait happens here, asynchronously.
 */
export const isBusy = (u: unknown): boolean => {
  if (!isSqlError(u)) return false
  const cause = u.reason.cause as { code?: unknown; message?: unknown } | undefined
  return (typeof cause?.code === "string" && (/^SQLITE_(BUSY|LOCKED)/.test(cause.code) || PG_RETRYABLE.has(cause.code))) ||
    (typeof cause?.message === "string" && cause.message.includes("database is locked"))
}

/**
 * PostgreSQL's answers that mean "run the whole operation again": serialization failure,
 * deadlock (one of two replicas' transactions is chosen to fail), lock not available, a unique
 * violation (two replicas checked, then inserted the same key: run again, the check finds the
 * other's row and answers as for a repeat), and a compare-and-set that found the row changed by
 * another replica (`staleRow`).
 */
const PG_RETRYABLE = new Set(["40001", "40P01", "55P03", "23505", "STALE_ROW"])

/** A compare-and-set update matched no row: another process changed it since it was read; retried. */
export const staleRow = (what: string) =>
  new SqlError({
    reason: new UnknownError({
      cause: { code: "STALE_ROW", message: `${what} changed concurrently` },
      message: `${what} changed concurrently`
    })
  })

/**
 * The database connection was lost or could not be opened (server restart, network). Reads
 * are retried (`guardFor`); a write is not (its commit may have happened) and answers 503.
 */
export const isConnectionLost = (u: unknown): boolean => {
  if (!isSqlError(u)) return false
  const cause = u.reason.cause as { code?: unknown; message?: unknown } | undefined
  const code = typeof cause?.code === "string" ? cause.code : ""
  const message = typeof cause?.message === "string" ? cause.message : ""
  // effect/sql classifies a lost or refused connection itself (PostgreSQL's driver: ConnectionError).
  if (u.reason._tag === "ConnectionError") return true
  return /^(08|57P0)/.test(code) || ["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT"].includes(code) ||
    /Connection terminated|connection error|timeout exceeded when trying to connect/i.test(message) ||
    /Connection error|Failed to acquire connection/.test(u.message)
}

/**
 * Operations that only read: safe to run again after a lost connection. Anything not named here
 * (every write, and any operation added later) answers 503 instead.
 */
const IDEMPOTENT_READS = new Set([
  "resolveTenant", "listEntities", "getEntity", "listTasks", "getTask", "getNextStep", "listWorkflows", "getRunbook",
  "getSnapshots", "listEvents", "listDocuments", "openDocument", "readDocument", "getGlConnection", "openGlSession",
  "listAgents", "getAgent", "authenticateAgent", "findAgentByKeyHash"
])

/** Reconnect attempts of a read: 50 ms doubling, three times (about 350 ms in all). */
const reconnectSchedule = Schedule.max([Schedule.exponential("50 millis"), Schedule.recurs(3)])

/** How long a store operation waits for another process's lock before answering 503 (SVC_DB_BUSY_TIMEOUT_MS). */
export const DEFAULT_BUSY_TIMEOUT_MS = defaultOf("SVC_DB_BUSY_TIMEOUT_MS")

/**
 * The busy bound of the store in context. The embedded layer provides the configured one where
 * the store is built (./store.ts reads it once, see `guardFor`); elsewhere the default applies.
 */
export const BusyTimeout = Context.Reference<number>("workspace/embedded/BusyTimeout", {
  defaultValue: () => DEFAULT_BUSY_TIMEOUT_MS
})

/**
 * Jittered exponential waits from 5 ms, at most 200 ms apart, for at most `boundMs` in all.
 * Every wait is a timer: the event loop keeps serving other requests meanwhile.
 */
const busySchedule = (boundMs: number) =>
  Schedule.exponential("5 millis").pipe(
    Schedule.jittered,
    (exponential) => Schedule.min([exponential, Schedule.spaced("200 millis")]),
    Schedule.upTo({ duration: Duration.millis(Math.max(0, boundMs)) })
  )

/** Retries `self` while SQLite answers busy, for at most `boundMs`; then the busy error stays. */
export const retryBusyFor = (boundMs: number) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  boundMs <= 0 ? self : Effect.retry(self, { schedule: busySchedule(boundMs), while: isBusy })

/** `retryBusyFor` with the bound of the store in context (BusyTimeout). */
export const retryBusy = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  BusyTimeout.use((boundMs) => retryBusyFor(boundMs)(self))

/** What a client hears when the store stays busy past the bound (503, with Retry-After). */
export const BUSY_MESSAGE = "The workspace store is busy (concurrent writes held what this one needs past the bound); retry shortly"

/**
 * The boundary of every store operation: busy retries up to `boundMs`, then SQL failures become
 * a generic ServiceUnavailable (503, answered with Retry-After). The detail goes to the log only;
 * clients never see SQL or paths.
 */
export const guardFor = (boundMs: number) => (operation: string) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable, R> =>
  retryBusyFor(boundMs)(self).pipe(
    (attempt) =>
      IDEMPOTENT_READS.has(operation) ? Effect.retry(attempt, { schedule: reconnectSchedule, while: isConnectionLost }) : attempt,
    Effect.catch((error: E): Effect.Effect<never, E | ServiceUnavailable> =>
      isSqlError(error)
        ? isBusy(error)
          ? Effect.logWarning(`workspace store: ${operation} still busy after ${boundMs} ms: ${describeError(error)}`).pipe(
            Effect.andThen(Effect.fail(new ServiceUnavailable({ message: BUSY_MESSAGE })))
          )
          : Effect.logError(`workspace store: ${operation} failed: ${describeError(error)}`).pipe(
            Effect.andThen(Effect.fail(new ServiceUnavailable({ message: "The workspace store is unavailable; try again" })))
          )
        : Effect.fail(error)
    ),
    // No stack captured for the span: an Error made per store call, whether tracing is on or not
    // (the SQL statements' own spans keep theirs).
    Effect.withSpan(`workspace.${operation}`, undefined, { captureStackTrace: false })
  ) as Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable, R>

/** `guardFor` with the default bound; the store uses the one it was built with. */
export const guard = guardFor(DEFAULT_BUSY_TIMEOUT_MS)

/** Long write paths give the event loop a turn between their parts (each driver call is synchronous). */
export { yieldToEventLoop } from "../../lib/eventLoop.js"

export const toJson = (value: unknown): string => JSON.stringify(value ?? null)
// Keys with escapes read as stored, whatever was parsed before (../../api/jsonParse.ts).
export const fromJson = <A = unknown>(text: string | null): A => (text === null ? null : parseJson(text)) as A

/**
 * A task's step history as stored (a JSON array of `{step, since}`). Anything else (text that is
 * no JSON, `null`, an entry without a step or a finite time) reads as no history, as a task of an
 * older version: its decisions bind to the current step, and its next move starts a history. A
 * damaged history answered every decision on the task with a 500 (`null` read as one).
 */
export const stepHistoryOf = (text: string | null | undefined): StepHistory => {
  let value: unknown
  try {
    value = fromJson(text ?? "[]")
  } catch {
    return []
  }
  if (!Array.isArray(value)) return []
  const entry = (e: unknown): e is StepEntry =>
    typeof e === "object" && e !== null && (typeof (e as StepEntry).step === "string" || (e as StepEntry).step === null) &&
    Number.isFinite((e as StepEntry).since)
  return value.every(entry) ? value : []
}

const decodeRunbook = Schema.decodeUnknownSync(Runbook)
export const runbookFromJson = (text: string | null): Workspace.Runbook | null =>
  text === null ? null : decodeRunbook(JSON.parse(text))

/** Fields SQLite returns NULL for become absent, as the records' optional fields require. */
const optional = <K extends string>(key: K, value: string | null): { [P in K]?: string } =>
  (value === null ? {} : { [key]: value }) as { [P in K]?: string }

export interface TaskRow {
  readonly id: string
  readonly tenant_id: string
  readonly entity_id: string
  readonly workflow_id: string
  readonly title: string
  readonly status: string
  readonly priority: string
  readonly created_at: string
  readonly current_step: string | null
  readonly snapshots: string
  readonly context: string
  /** JSON StepHistory (../../domain/engine.ts): when each step became current. */
  readonly step_history: string
  /** When the current step became current (ISO); null on rows written before it was kept. */
  readonly waiting_since?: string | null
  /** The claim (../../domain/assignment.ts): valid while claim_step is the current step. */
  readonly claim_step?: string | null
  readonly claimed_by?: string | null
  readonly claimed_at?: string | null
  readonly claim_override?: number | boolean | null
}

/** The task row's claim, if it holds one (on whichever step it names). */
export const claimOfRow = (r: TaskRow): Claim | null =>
  r.claim_step == null || r.claimed_by == null
    ? null
    : { stepId: r.claim_step, by: r.claimed_by, at: r.claimed_at ?? r.created_at, override: r.claim_override === true || Number(r.claim_override) === 1 }

/** What a task record is read from. */
export type TaskRecordRow = Pick<
  TaskRow,
  "id" | "tenant_id" | "entity_id" | "workflow_id" | "title" | "status" | "priority" | "created_at" | "current_step"
>

export const taskOfRow = (r: TaskRecordRow): Workspace.Task => ({
  id: r.id,
  tenantId: r.tenant_id,
  entityId: r.entity_id,
  workflowId: r.workflow_id,
  title: r.title,
  status: r.status,
  priority: r.priority,
  createdAt: r.created_at,
  currentStep: r.current_step
})

export interface DocumentRow {
  readonly id: string
  readonly tenant_id: string
  readonly task_id: string
  readonly source: string
  readonly filename: string
  readonly content_type: string
  readonly size_bytes: number
  readonly uploaded_at: string
  readonly period: string | null
  readonly schema_slug: string | null
  /** 1: the bytes are a file beside the database (./DocumentFiles.ts); 0 or absent: document_chunks. */
  readonly file_backed?: number | string | null
}

export const documentOfRow = (r: DocumentRow): Workspace.Document => ({
  id: r.id,
  tenantId: r.tenant_id,
  taskId: r.task_id,
  source: r.source,
  filename: r.filename,
  contentType: r.content_type,
  sizeBytes: Number(r.size_bytes),
  uploadedAt: r.uploaded_at,
  ...optional("period", r.period),
  ...optional("schemaSlug", r.schema_slug)
})

export interface EventRow {
  readonly tx: number | string
  readonly position: number | string
  readonly task_id: string
  /** NULL for the gateway's own events: read as their position. */
  readonly seq: number | string | null
  readonly origin: string
  readonly type: string
  readonly source: string
  readonly source_label: string | null
  readonly payload: string
  readonly group_key: string | null
  readonly created_at: string
}

/**
 * The columns an event is read from (PostgreSQL's `rowid` stays in the store). `tx` as text: the
 * PostgreSQL driver reads results in binary and has no codec for xid8 (its 8 bytes were decoded
 * as UTF-8 text: garbage, or a failed row). A query ordering by it names the table's column
 * (`ORDER BY events.tx`): a bare `tx` would sort by this text ("1000" before "999").
 */
export const EVENT_COLUMNS = "CAST(tx AS TEXT) AS tx, position, task_id, seq, origin, type, source, source_label, payload, group_key, created_at"

const origins = new Set<string>(["gateway", "agent", "producer"])

export const eventOfRow = (r: EventRow): TaskEvent => ({
  taskId: r.task_id,
  type: r.type,
  source: r.source,
  ...optional("sourceLabel", r.source_label),
  seq: Number(r.seq ?? r.position),
  payload: fromJson<Record<string, unknown>>(r.payload),
  ...optional("groupKey", r.group_key),
  createdAt: r.created_at,
  position: positionOf(r.tx, r.position),
  origin: origins.has(r.origin) ? r.origin as TaskEvent["origin"] : "producer"
})

export interface GlRow {
  readonly tenant_id: string
  readonly provider: string
  readonly service: string
  readonly status: string
  readonly connected_at: string | null
  readonly metadata: string
}

export const glOfRow = (r: GlRow): Workspace.GlConnection => ({
  tenantId: r.tenant_id,
  provider: r.provider,
  service: r.service,
  status: r.status,
  connectedAt: r.connected_at,
  metadata: fromJson<Workspace.GlConnection["metadata"]>(r.metadata)
})

/** A tenant's GL connection written (one per tenant, replaced whole): the store's writes and the seed alike. */
export const upsertGlConnection = (
  sql: SqlClient.SqlClient,
  c: Pick<Workspace.GlConnection, "tenantId" | "provider" | "service" | "status" | "connectedAt" | "metadata">
) =>
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

export interface SubledgerRow {
  readonly ledger: string
  readonly id: string
  readonly tenant_id: string
  readonly task_id: string | null
  readonly status: string
  readonly fields: string
}

export const rowFields = (r: SubledgerRow): Record<string, Scalar> => fromJson<Record<string, Scalar>>(r.fields)

/** Document bytes are stored in chunks of this size; a download holds one chunk at a time. */
export const CHUNK_BYTES = 256 * 1024

/**
 * Writes the bytes as CHUNK_BYTES-sized BLOB rows; call inside the document's transaction. Each
 * insert runs synchronously in the driver (about 1 ms), so the event loop gets a turn whenever
 * the inserts have run for a time slice: a large upload never holds it for much longer than that.
 * Spooled bytes (a raw upload) are read from their file one chunk before its insert: the write
 * holds one chunk in memory, whatever the document's size.
 */
export const insertChunks = (sql: SqlClient.SqlClient, documentId: string, bytes: Uint8Array | SpooledBytes) =>
  Effect.suspend(() => {
    const slice = timeSlice()
    const chunk = (idx: number): Effect.Effect<Uint8Array> => {
      const start = idx * CHUNK_BYTES
      const length = Math.min(CHUNK_BYTES, bytes.length - start)
      // A view, not a copy: the driver binds it as a BLOB.
      return isSpooled(bytes)
        ? bytes.read(start, length)
        : Effect.succeed(Buffer.from(bytes.buffer, bytes.byteOffset + start, length))
    }
    return Effect.forEach(
      Array.from({ length: Math.ceil(bytes.length / CHUNK_BYTES) }, (_, i) => i),
      (idx) =>
        // The slice began with this loop: before the first insert it never takes a turn.
        Effect.andThen(slice, Effect.flatMap(chunk(idx), (data) =>
          sql`INSERT INTO document_chunks (document_id, idx, data) VALUES (${documentId}, ${idx}, ${data})`)),
      { discard: true }
    )
  })
