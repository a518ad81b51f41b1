/** Resources of spec §2, as the gateway returns them. */
import * as Schema from "effect/Schema"
import { optional } from "./optional.js"
import { Timestamp, Uuid } from "./ids.js"
import { JsonRecord, jsonObject } from "./jsonObject.js"

export const EntitySummary = Schema.Struct({
  id: Uuid,
  tenantId: Uuid,
  slug: Schema.String,
  name: Schema.String
}).annotate({ identifier: "EntitySummary" })
export type EntitySummary = typeof EntitySummary.Type

export const TaskStatus = Schema.String.annotate({
  description: "Task status; values seen: IN_PROGRESS, COMPLETED, FAILED (the last two are terminal)"
})

export const TaskSummary = Schema.Struct({
  id: Uuid,
  title: Schema.String,
  status: TaskStatus,
  priority: Schema.String,
  awaiting: optional(Schema.String.annotate({
    description: "Current step's displayHint.component; absent when the next-step lookup fails or the task is terminal"
  })),
  entityId: Uuid,
  workflowId: Schema.String,
  createdAt: Timestamp
}).annotate({ identifier: "TaskSummary" })
export type TaskSummary = typeof TaskSummary.Type

export const StartParamType = Schema.Literals(["string", "number", "boolean", "array", "object"])
export type StartParamType = typeof StartParamType.Type

export const StartParam = Schema.Struct({
  key: Schema.String,
  type: StartParamType,
  description: optional(Schema.String),
  pattern: optional(Schema.String),
  enum: optional(Schema.Array(Schema.Unknown)),
  default: optional(Schema.Unknown),
  required: Schema.Boolean
}).annotate({ identifier: "StartParam" })
export type StartParam = typeof StartParam.Type

export const WorkflowEntry = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  startParams: optional(Schema.Array(StartParam).annotate({
    description: "Omitted when the workflow's runbook lookup fails"
  }))
}).annotate({ identifier: "WorkflowEntry" })
export type WorkflowEntry = typeof WorkflowEntry.Type

/** The task row the workspace service created: the summary fields, plus whatever else it returns. */
export const CreatedTask = Schema.StructWithRest(
  Schema.Struct({
    id: Uuid,
    title: Schema.String,
    status: TaskStatus,
    priority: Schema.String,
    entityId: Uuid,
    workflowId: Schema.String,
    createdAt: Timestamp
  }),
  [JsonRecord]
).annotate({ identifier: "CreatedTask" })
export type CreatedTask = typeof CreatedTask.Type

export const DisplayHint = Schema.Struct({
  component: Schema.String,
  config: jsonObject()
}).annotate({ identifier: "DisplayHint" })

export const UiStep = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  displayHint: DisplayHint,
  args: jsonObject()
}).annotate({ identifier: "UiStep" })
export type UiStep = typeof UiStep.Type

export const UiState = Schema.Struct({
  task: Schema.StructWithRest(Schema.Struct({ id: Uuid, title: Schema.String, status: TaskStatus }), [
    JsonRecord
  ]),
  step: Schema.NullOr(UiStep).annotate({ description: "The current step; null for a task with no next step" }),
  steps: Schema.Array(Schema.Struct({
    id: Schema.String,
    title: optional(Schema.String.annotate({ description: "The step's title in its runbook, for people" })),
    status: Schema.String
  }))
}).annotate({ identifier: "UiState" })
export type UiState = typeof UiState.Type

export const StepSnapshots = jsonObject({
  identifier: "StepSnapshots",
  description: "Map of step id to what was shown and decided at that completed step"
})

/**
 * Who wrote an event, as the store recorded it (no client can set it): `gateway` for the
 * gateway's own record (audit, engine, an agent's action records), `agent` for an agent's own
 * event through the tool server (its `agent:<uuid>` source is the authenticated agent),
 * `producer` for an event a client posted. Readers trust a source only by this mark.
 */
export const EventOrigin = Schema.Literals(["gateway", "agent", "producer"]).annotate({ identifier: "EventOrigin" })
export type EventOrigin = typeof EventOrigin.Type

export const TaskEvent = Schema.StructWithRest(
  Schema.Struct({
    taskId: Schema.String,
    type: Schema.String,
    source: Schema.String,
    sourceLabel: optional(Schema.String),
    seq: Schema.Int.annotate({
      description: "The producer's number, unique per task and source; the gateway's own events carry their position"
    }),
    payload: jsonObject(),
    groupKey: optional(Schema.String),
    createdAt: Timestamp,
    position: Schema.String.annotate({
      description: "Where the event stands in the task's merged timeline, as the store ordered it (digits, or two " +
        "numbers joined by `-` on PostgreSQL): answers are in this order; pass it back as `after` to read what follows. Opaque: compare only for equality"
    }),
    origin: EventOrigin.annotate({ description: "Who wrote the event, set by the store: gateway, agent or producer" })
  }),
  [JsonRecord]
).annotate({ identifier: "TaskEvent" })
export type TaskEvent = typeof TaskEvent.Type

export const FileDocument = Schema.Struct({
  id: Uuid,
  filename: Schema.String,
  contentType: Schema.String,
  uploadedAt: Timestamp,
  downloadUrl: Schema.String
}).annotate({ identifier: "FileDocument" })
export type FileDocument = typeof FileDocument.Type

export const UploadResult = Schema.Struct({
  documentRef: Uuid,
  taskId: Schema.String,
  source: Schema.String,
  filename: Schema.String,
  contentType: Schema.String,
  sizeBytes: Schema.Int,
  uploadedAt: Timestamp,
  downloadUrl: Schema.String,
  signaled: Schema.Boolean.annotate({ description: "Whether a workflow signal was recorded to follow the persist" })
}).annotate({ identifier: "UploadResult" })
export type UploadResult = typeof UploadResult.Type

export const DataIngestResult = Schema.Struct({
  id: Uuid.annotateKey({ description: "Persisted row id" }),
  status: Schema.Literal("accepted"),
  signaled: Schema.Boolean
}).annotate({ identifier: "DataIngestResult" })
export type DataIngestResult = typeof DataIngestResult.Type

export const RejectResult = Schema.Struct({
  status: Schema.Literal("OK"),
  rowId: Uuid,
  newStatus: Schema.String
}).annotate({ identifier: "RejectResult" })
export type RejectResult = typeof RejectResult.Type

export const Scalar = Schema.Union([Schema.String, Schema.Finite, Schema.Boolean, Schema.Null]).annotate({
  identifier: "Scalar"
})
export type Scalar = typeof Scalar.Type

export const UpdateResult = Schema.Struct({
  status: Schema.Literal("OK"),
  rowId: Uuid,
  field: Schema.String,
  value: Scalar
}).annotate({ identifier: "UpdateResult" })
export type UpdateResult = typeof UpdateResult.Type

export const GlStatus = Schema.Struct({
  connected: Schema.Boolean,
  tenantId: Uuid,
  provider: optional(Schema.String),
  service: optional(Schema.String),
  status: optional(Schema.String),
  lastSyncAt: optional(Schema.NullOr(Timestamp)),
  workspaceName: optional(Schema.String)
}).annotate({
  identifier: "GlStatus",
  description: "When the tenant has no GL configured, only connected=false and tenantId"
})
export type GlStatus = typeof GlStatus.Type

export const GlConnectSession = Schema.Struct({
  sessionUrl: Schema.String,
  consumerId: Schema.String
}).annotate({ identifier: "GlConnectSession" })
export type GlConnectSession = typeof GlConnectSession.Type

export const Ok = Schema.Struct({ ok: Schema.Literal(true) }).annotate({ identifier: "Ok" })
