/**
 * The port to the upstream workspace service: every read and write the handlers need.
 * Implementations: the embedded store, the HTTP client of WorkspaceApi, and test fakes.
 *
 * Every method but `resolveTenant` and `getTask` takes the tenant id and must scope its
 * lookup to it: another tenant's record fails exactly like a missing one (NotFound).
 * Failures use the gateway's own error classes, so they reach the client unchanged.
 *
 * Idempotent writes: every write (createTask, signal, appendEvent, putDocument, ingestData,
 * rejectRow, updateRow, createGlSession, deleteGlConnection) reads the idempotency key of the
 * request it serves from `currentIdempotencyKey` (set with `withIdempotencyKey`; the gateway's
 * middleware sets the client's `Idempotency-Key`; a remote implementation generates one per
 * write without it, for that write's retries). An implementation stores the key with the write's result, in the write's transaction: the same
 * key again with the same operation and arguments returns the stored result and writes
 * nothing; the same key with a different operation or arguments is a Conflict (Stripe's
 * semantics). Failed writes store nothing. Keys are per tenant and kept at least 24 hours.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import { BadRequest, type Conflict, type Forbidden, type NotFound, type PayloadTooLarge, type UpstreamError } from "../api/errors.js"
import type {
  CreatedTask,
  EntitySummary,
  GlConnectSession,
  RejectResult,
  Scalar,
  StartParamType,
  TaskEvent,
  UiStep,
  UpdateResult
} from "../api/resources.js"
import type { TaskEventDto, TimelineRecord } from "../api/dtos.js"
import type { TimelinePage } from "../api/eventPaging.js"
import type { Workspace } from "./model.js"
import type { Agent } from "./registry.js"
import type { InboxQuery, InboxSlice } from "./inbox.js"
import type { StepClaim } from "../api/inbox.js"
import { idempotencyKeyProblem } from "../api/idempotency.js"

export type { Workspace }

export type WsEffect<A, E = never> = Effect.Effect<A, E | UpstreamError>

export interface WorkspaceClientService {
  readonly resolveTenant: (slug: string) => WsEffect<Workspace.Tenant, NotFound>
  readonly listEntities: (tenantId: string) => WsEffect<ReadonlyArray<EntitySummary>>
  readonly getEntity: (tenantId: string, entityId: string) => WsEffect<EntitySummary, NotFound>
  /**
   * The entity's tasks in creation order; with `query`, only those it selects (see TaskQuery).
   * A query's `afterId` that is not a task of this entity is a BadRequest.
   */
  readonly listTasks: (
    tenantId: string,
    entityId: string,
    query?: TaskQuery
  ) => WsEffect<ReadonlyArray<Workspace.Task>, BadRequest>
  /**
   * The task list with each task's `awaiting` (src/upstream/taskBoard.ts says what it answers):
   * listTasks and getNextSteps in one step, NotFound when the entity is not the tenant's.
   * Optional: an implementation that can answer it in one round trip provides it (the HTTP
   * client); without it, `taskBoard` composes it from getEntity, listTasks and getNextSteps.
   */
  readonly listTaskBoard?: (
    tenantId: string,
    entityId: string,
    query?: TaskQuery
  ) => WsEffect<ReadonlyArray<Workspace.BoardTask>, NotFound | BadRequest>
  /** Unscoped by design: the gateway compares the task's tenantId with its own (and refreshes once). */
  readonly getTask: (taskId: string) => WsEffect<Workspace.Task, NotFound>
  /** The task's current step and every step's status; NotFound when the task has no runbook. */
  readonly getNextStep: (tenantId: string, taskId: string) => WsEffect<Workspace.NextStep, NotFound>
  /**
   * The next steps of many tasks in one upstream round trip (the task list's `awaiting`): one
   * answer per requested id, in order, `nextStep` null where getNextStep would fail for that
   * task (missing, another tenant's, no runbook, or its own lookup failed). Only a failure of
   * the whole call fails the effect.
   */
  readonly getNextSteps: (tenantId: string, taskIds: ReadonlyArray<string>) => WsEffect<ReadonlyArray<Workspace.NextStepOf>>
  /** The tenant's workflows plus the global ones (tenantId null). */
  readonly listWorkflows: (tenantId: string) => WsEffect<ReadonlyArray<Workspace.Workflow>>
  readonly getRunbook: (tenantId: string, workflowId: string) => WsEffect<Workspace.Runbook, NotFound>
  readonly createTask: (
    tenantId: string,
    entityId: string,
    input: { readonly workflowId: string; readonly context: Record<string, unknown> }
  ) => WsEffect<CreatedTask, NotFound | BadRequest | Conflict>
  readonly getSnapshots: (tenantId: string, taskId: string) => WsEffect<Record<string, unknown>, NotFound>
  /**
   * Sends a workflow signal; a composite child id resolves to its root task. With
   * `expectedStep`, a decision (approve/reject) or row action applies to that step only: the
   * decision already taken on it again is a no-op (succeeds), a step no longer current or
   * decided the other way is a Conflict naming the current step.
   */
  readonly signal: (tenantId: string, signal: Workspace.Signal) => WsEffect<void, NotFound | BadRequest | Conflict | Forbidden>
  /**
   * Appends a producer's event (origin `producer`). Its seq is unique per task and source: an
   * identical re-post answers the stored event, a different event at a taken seq is a Conflict.
   * Nothing the gateway writes takes a producer's seq.
   */
  /** BadRequest: a source that reads as the gateway's (src/domain/eventSources.ts), judged by the store. */
  readonly appendEvent: (tenantId: string, taskId: string, event: TaskEventDto) => WsEffect<TaskEvent, NotFound | Conflict | BadRequest>
  /**
   * Appends an event the gateway vouches for: its own record (origin `gateway`, read with seq =
   * position), or an agent's own event (origin `agent`: a producer whose source the tool server
   * authenticated; without a seq it takes the next of its own source).
   */
  readonly recordEvent: (tenantId: string, taskId: string, record: TimelineRecord) => WsEffect<TaskEvent, NotFound | Conflict>
  /**
   * The timeline in position order; with `page`, only events after `after`, at most `limit` (and
   * `maxBytes`) of them. BadRequest (naming `after`) for a position past every one the store has
   * given out: no later event would follow it.
   */
  readonly listEvents: (tenantId: string, taskId: string, page?: EventPage) => WsEffect<TimelinePage, NotFound | BadRequest>
  readonly listDocuments: (
    tenantId: string,
    taskId: string,
    query: { readonly source?: string | undefined; readonly limit: number }
  ) => WsEffect<ReadonlyArray<Workspace.Document>>
  /** Persists the document and, in the same transaction, the signal that must follow it. */
  readonly putDocument: (
    tenantId: string,
    doc: Workspace.NewDocument,
    signal: Option.Option<Workspace.Signal>
    // PayloadTooLarge: a remote service whose body cap is below this gateway's.
  ) => WsEffect<Workspace.Document, NotFound | BadRequest | Conflict | Forbidden | PayloadTooLarge>
  /**
   * The record and a stream of its bytes. What the stream reads from (a remote implementation:
   * the download's connection) is held until the stream ends, and given up when the caller's
   * scope closes at the latest: a body that is never run (a HEAD answer, a refusal after the
   * open) must not hold it.
   */
  readonly openDocument: (
    tenantId: string,
    documentId: string
  ) => Effect.Effect<
    { readonly document: Workspace.Document; readonly body: Stream.Stream<Uint8Array, UpstreamError> },
    NotFound | UpstreamError,
    Scope.Scope
  >
  /** Stores the rows in one transaction, with one signal per row recorded alongside. */
  readonly ingestData: (
    tenantId: string,
    batch: Workspace.DataBatch,
    signal: Option.Option<Omit<Workspace.Signal, "payload">>
  ) => WsEffect<ReadonlyArray<{ readonly id: string; readonly signaled: boolean }>, NotFound | BadRequest | Conflict | Forbidden | PayloadTooLarge>
  readonly rejectRow: (tenantId: string, ledger: string, rowId: string) => WsEffect<RejectResult, NotFound | BadRequest | Conflict>
  readonly updateRow: (
    tenantId: string,
    ledger: string,
    rowId: string,
    field: string,
    value: Scalar,
    /** The value the editor saw: a cell that holds another is a Conflict with currentValue and changedBy; nothing is written. */
    expected?: Option.Option<Scalar>
  ) => WsEffect<UpdateResult, NotFound | BadRequest | Conflict>
  readonly getGlConnection: (tenantId: string) => WsEffect<Option.Option<Workspace.GlConnection>>
  /** An unknown serviceId is a 400 listing the known services. */
  readonly createGlSession: (
    tenantId: string,
    serviceId: string | undefined
  ) => WsEffect<GlConnectSession, NotFound | BadRequest | Conflict>
  readonly deleteGlConnection: (tenantId: string) => WsEffect<void, Conflict>
  /**
   * The agent of this tenant holding the API key whose SHA-256 is `keyHash` (64 hex digits,
   * src/domain/apiKeys.ts), hashes compared in constant time: the agent tool server's
   * authentication. NotFound for any other key: unknown, deleted, or another tenant's agent's.
   */
  readonly findAgentByKeyHash: (tenantId: string, keyHash: string) => WsEffect<Agent, NotFound>
  /**
   * A page of the inbox (src/upstream/inbox.ts InboxQuery): the tenant's running tasks at a step,
   * oldest waiting first, for the request's caller (actor, groups: src/services/Actor.ts).
   */
  readonly inbox: (tenantId: string, query: InboxQuery) => WsEffect<InboxSlice>
  /** Claims the task's current step for the request's actor (src/domain/assignment.ts claimDecision). */
  readonly claimStep: (tenantId: string, taskId: string, override: boolean) => WsEffect<StepClaim, NotFound | BadRequest | Conflict | Forbidden>
  /** Releases the current step's claim (a no-op when none); Conflict: an Idempotency-Key reused for another request. */
  readonly releaseClaim: (tenantId: string, taskId: string) => WsEffect<void, NotFound | Forbidden | Conflict>
}

/**
 * Which of an entity's tasks to list (every field optional, all of them must hold), pushed down
 * to the store because each is a plain column test: `status`; `currentSteps`, tasks whose
 * current step is one of these (a workflow's step, what `awaiting` and agent assignment are
 * derived from through the runbook); `afterId`, the tasks after this one in the list's order;
 * `limit`, the first that many.
 */
export interface TaskQuery {
  readonly status?: string | undefined
  readonly currentSteps?: ReadonlyArray<Workspace.StepRef> | undefined
  readonly afterId?: string | undefined
  readonly limit?: number | undefined
}

/** Timeline paging: the events after position `after`, the first `limit` of them, in position order. */
export interface EventPage {
  readonly after?: string | undefined
  readonly limit?: number | undefined
  /**
   * Stop after the event that takes the answer to this many bytes (src/api/eventPaging.ts,
   * eventSize and eventsWithinBytes): the first event always comes, and the answer says whether
   * more follows.
   */
  readonly maxBytes?: number | undefined
}

export class WorkspaceClient extends Context.Service<WorkspaceClient, WorkspaceClientService>()("upstream/WorkspaceClient") {}

export type { StartParamType, UiStep }

/** The idempotency key of the write the current fiber is making; None outside a keyed request. */
export const currentIdempotencyKey: Context.Reference<Option.Option<string>> = Context.Reference("upstream/currentIdempotencyKey", {
  defaultValue: Option.none<string>
})

/**
 * Where a raw upload spools its body: the directory a store keeps large documents in as files
 * (the embedded store on a SQLite file provides it), so that storing the document is a rename of
 * the spool, not a copy. Unset (the default, and every other store): the OS temporary directory.
 */
export const UploadSpoolDirectory: Context.Reference<string | undefined> = Context.Reference("upstream/UploadSpoolDirectory", {
  defaultValue: (): string | undefined => undefined
})

/**
 * Runs `self` with `key` as its idempotency key (unchanged when undefined). A key that is not
 * 1-255 visible ASCII characters fails with a BadRequest before anything runs.
 */
export const withIdempotencyKey = (key: string | undefined) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | BadRequest, R> => {
  if (key === undefined) return self
  const problem = idempotencyKeyProblem(key)
  return problem !== undefined
    ? Effect.fail(new BadRequest({ message: problem }))
    : Effect.provideService(self, currentIdempotencyKey, Option.some(key))
}
