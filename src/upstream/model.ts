/**
 * Records exchanged with the workspace service, as schemas: the embedded store returns them,
 * the HTTP WorkspaceApi carries them, the gateway reads them.
 */
import * as Schema from "effect/Schema"
import { closed } from "../api/dtos.js"
import { Timestamp, Uuid } from "../api/ids.js"
import { Scalar, UiStep } from "../api/resources.js"

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const Tenant = Schema.Struct({ id: Uuid, slug: Schema.String, name: Schema.String }).annotations({
  identifier: "Tenant"
})

export const Task = Schema.Struct({
  id: Uuid,
  tenantId: Uuid,
  entityId: Uuid,
  workflowId: Schema.String,
  title: Schema.String,
  status: Schema.String,
  priority: Schema.String,
  createdAt: Timestamp,
  currentStep: Schema.NullOr(Schema.String)
}).annotations({ identifier: "Task" })

export const StepStatus = Schema.Struct({
  id: Schema.String,
  // Optional: a workspace service of an older version sends id and status only.
  title: Schema.optional(Schema.String).annotations({ description: "The step's title in its runbook" }),
  status: Schema.String
})

export const NextStep = Schema.Struct({
  step: Schema.NullOr(UiStep),
  steps: Schema.Array(StepStatus)
}).annotations({ identifier: "NextStep" })

/** One task's answer in a batch of next steps: null when that task's lookup failed (404 alike). */
export const NextStepOf = Schema.Struct({
  taskId: Schema.String,
  nextStep: Schema.NullOr(NextStep)
}).annotations({ identifier: "NextStepOf" })

/** One step of one workflow: a task's current step, as a list filter names it. */
export const StepRef = Schema.Struct({
  workflowId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)),
  stepId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256))
}).annotations({ identifier: "StepRef" })

export const Workflow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  tenantId: Schema.NullOr(Uuid)
}).annotations({ identifier: "Workflow" })

export const ConfigProperty = Schema.Struct(
  {
    type: Schema.optional(Schema.String),
    description: Schema.optional(Schema.String),
    pattern: Schema.optional(Schema.String),
    enum: Schema.optional(Schema.Array(Schema.Unknown)),
    default: Schema.optional(Schema.Unknown)
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)

export const RunbookStep = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  displayHint: Schema.Struct({ component: Schema.String, config: Schema.optionalWith(JsonObject, { default: () => ({}) }) }),
  args: Schema.optionalWith(JsonObject, { default: () => ({}) }),
  agentId: Schema.optional(Uuid).annotations({
    description: "Registry UUID of the agent this step is assigned to: only that agent may complete it through the agent tool server"
  }),
  requireDistinctDecider: Schema.optional(Schema.Boolean).annotations({
    description: "Four-eyes: whoever completes this step (approves, rejects or submits its file) must be named by the edge " +
      "and must not have completed an earlier step of the task; otherwise 403"
  })
})

export const Runbook = Schema.Struct({
  configSchema: Schema.optionalWith(
    Schema.Struct({
      global: Schema.optional(
        Schema.Struct({
          type: Schema.optional(Schema.String),
          properties: Schema.optionalWith(Schema.Record({ key: Schema.String, value: ConfigProperty }), {
            default: () => ({})
          })
        })
      )
    }),
    { default: () => ({}) }
  ),
  steps: Schema.Array(RunbookStep)
}).annotations({ identifier: "Runbook" })

export const Signal = Schema.Struct({
  taskId: Schema.String.annotations({ description: "Task or composite child id; resolved to its root task" }),
  name: Schema.String,
  payload: JsonObject,
  expectedStep: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256))).annotations({
    description: "The step this signal is for (approve, reject, file_submitted, row actions). When given, the signal " +
      "applies to that step only: a repeat of the decision already taken on it is a no-op, a decision for a step " +
      "that is no longer current (or was decided the other way) is a 409 naming the current step. When omitted, " +
      "the step current when the signal is recorded."
  })
}).pipe(closed("Signal"))

export const Document = Schema.Struct({
  id: Uuid,
  tenantId: Uuid,
  taskId: Schema.String,
  source: Schema.String,
  filename: Schema.String,
  contentType: Schema.String,
  sizeBytes: Schema.Int,
  uploadedAt: Timestamp,
  period: Schema.optional(Schema.String),
  schemaSlug: Schema.optional(Schema.String)
}).annotations({ identifier: "Document" })

export interface NewDocument {
  readonly taskId: string
  readonly source: string
  readonly filename: string
  readonly contentType: string
  readonly period?: string | undefined
  readonly schemaSlug?: string | undefined
  readonly bytes: Uint8Array
}

export const DataBatch = Schema.Struct({
  taskId: Schema.String,
  kind: Schema.optional(Schema.String),
  rows: Schema.Array(Schema.Struct({ data: JsonObject, sourceRef: Schema.optional(Schema.Unknown) }))
}).annotations({ identifier: "DataBatch" })

export const GlConnection = Schema.Struct({
  tenantId: Uuid,
  provider: Schema.String,
  service: Schema.String,
  status: Schema.String,
  connectedAt: Schema.NullOr(Timestamp),
  metadata: Schema.Struct({
    name: Schema.optional(Schema.String),
    service: Schema.optional(Schema.String),
    updated_at: Schema.optional(Timestamp)
  })
}).annotations({ identifier: "GlConnection" })

export const RowCell = Scalar

export declare namespace Workspace {
  export type Tenant = typeof Tenant.Type
  export type Task = typeof Task.Type
  export type NextStep = typeof NextStep.Type
  export type NextStepOf = typeof NextStepOf.Type
  export type Workflow = typeof Workflow.Type
  export type StepRef = typeof StepRef.Type
  export type Runbook = typeof Runbook.Type
  export type Signal = typeof Signal.Type
  export type Document = typeof Document.Type
  export type NewDocument = import("./model.js").NewDocument
  export type DataBatch = typeof DataBatch.Type
  export type GlConnection = typeof GlConnection.Type
}
