/**
 * The port to the upstream workspace service: every read and write the handlers need.
 * Implementations: the embedded store, the HTTP client of WorkspaceApi, and test fakes.
 *
 * Every method but `resolveTenant` and `getTask` takes the tenant id and must scope its
 * lookup to it: another tenant's record fails exactly like a missing one (NotFound).
 * Failures use the gateway's own error classes, so they reach the client unchanged.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Stream from "effect/Stream"
import type { BadRequest, Conflict, NotFound, UpstreamError } from "../api/errors.js"
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
import type { TaskEventDto } from "../api/dtos.js"
import type { Workspace } from "../workspace/model.js"

export type { Workspace }

export type WsEffect<A, E = never> = Effect.Effect<A, E | UpstreamError>

export interface WorkspaceClientService {
  readonly resolveTenant: (slug: string) => WsEffect<Workspace.Tenant, NotFound>
  readonly listEntities: (tenantId: string) => WsEffect<ReadonlyArray<EntitySummary>>
  readonly getEntity: (tenantId: string, entityId: string) => WsEffect<EntitySummary, NotFound>
  readonly listTasks: (tenantId: string, entityId: string) => WsEffect<ReadonlyArray<Workspace.Task>>
  /** Unscoped by design: the gateway compares the task's tenantId with its own (and refreshes once). */
  readonly getTask: (taskId: string) => WsEffect<Workspace.Task, NotFound>
  /** The task's current step and every step's status; NotFound when the task has no runbook. */
  readonly getNextStep: (tenantId: string, taskId: string) => WsEffect<Workspace.NextStep, NotFound>
  /** The tenant's workflows plus the global ones (tenantId null). */
  readonly listWorkflows: (tenantId: string) => WsEffect<ReadonlyArray<Workspace.Workflow>>
  readonly getRunbook: (tenantId: string, workflowId: string) => WsEffect<Workspace.Runbook, NotFound>
  readonly createTask: (
    tenantId: string,
    entityId: string,
    input: { readonly workflowId: string; readonly context: Record<string, unknown> }
  ) => WsEffect<CreatedTask, NotFound | BadRequest>
  readonly getSnapshots: (tenantId: string, taskId: string) => WsEffect<Record<string, unknown>, NotFound>
  /** Sends a workflow signal; a composite child id resolves to its root task. */
  readonly signal: (tenantId: string, signal: Workspace.Signal) => WsEffect<void, NotFound | BadRequest>
  /** Appends an event; an identical re-post is a no-op, a different body with a taken seq a Conflict. */
  readonly appendEvent: (tenantId: string, taskId: string, event: TaskEventDto) => WsEffect<TaskEvent, NotFound | Conflict>
  readonly listEvents: (tenantId: string, taskId: string) => WsEffect<ReadonlyArray<TaskEvent>, NotFound>
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
  ) => WsEffect<Workspace.Document, NotFound | BadRequest>
  readonly openDocument: (
    tenantId: string,
    documentId: string
  ) => WsEffect<{ readonly document: Workspace.Document; readonly body: Stream.Stream<Uint8Array, UpstreamError> }, NotFound>
  /** Stores the rows in one transaction, with one signal per row recorded alongside. */
  readonly ingestData: (
    tenantId: string,
    batch: Workspace.DataBatch,
    signal: Option.Option<Omit<Workspace.Signal, "payload">>
  ) => WsEffect<ReadonlyArray<{ readonly id: string; readonly signaled: boolean }>, NotFound | BadRequest>
  readonly rejectRow: (tenantId: string, ledger: string, rowId: string) => WsEffect<RejectResult, NotFound | BadRequest>
  readonly updateRow: (
    tenantId: string,
    ledger: string,
    rowId: string,
    field: string,
    value: Scalar
  ) => WsEffect<UpdateResult, NotFound | BadRequest>
  readonly getGlConnection: (tenantId: string) => WsEffect<Option.Option<Workspace.GlConnection>>
  /** An unknown serviceId is a 400 listing the known services. */
  readonly createGlSession: (tenantId: string, serviceId: string | undefined) => WsEffect<GlConnectSession, NotFound | BadRequest>
  readonly deleteGlConnection: (tenantId: string) => WsEffect<void>
}

export class WorkspaceClient extends Context.Tag("WorkspaceClient")<WorkspaceClient, WorkspaceClientService>() {}

export type { StartParamType, UiStep }
