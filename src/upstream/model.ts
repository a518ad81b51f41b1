/**
 * Records exchanged with the workspace service, as schemas: the embedded store returns them,
 * the HTTP WorkspaceApi carries them, the gateway reads them.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { isMaxChars } from "../api/textLength.js"
import { optional } from "../api/optional.js"
import { closed } from "../api/dtos.js"
import { jsonObject } from "../api/jsonObject.js"
import { Timestamp, Uuid, withUuidFolded } from "../api/ids.js"
import { Scalar, UiStep } from "../api/resources.js"

const JsonObject = jsonObject()

export const Tenant = Schema.Struct({ id: Uuid, slug: Schema.String, name: Schema.String }).annotate({
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
}).annotate({ identifier: "Task" })

/**
 * A task as a board lists it: its record, and what it waits for (`awaiting`: the display
 * component of its current step, absent for a terminal task or where its next-step lookup
 * fails). What the task list needs of a next step, without the step itself (its args, a table
 * step's rows): a few bytes a task instead of hundreds.
 */
export const BoardTask = Schema.Struct({
  ...Task.fields,
  awaiting: optional(Schema.String.annotate({ description: "The current step's displayHint.component; absent for a terminal task or a failed lookup" }))
}).annotate({ identifier: "BoardTask" })

export const StepStatus = Schema.Struct({
  id: Schema.String,
  // Optional: a workspace service of an older version sends id and status only.
  title: optional(Schema.String.annotate({ description: "The step's title in its runbook" })),
  status: Schema.String
})

export const NextStep = Schema.Struct({
  step: Schema.NullOr(UiStep),
  steps: Schema.Array(StepStatus)
}).annotate({ identifier: "NextStep" })

/** One task's answer in a batch of next steps: null when that task's lookup failed (404 alike). */
export const NextStepOf = Schema.Struct({
  taskId: Schema.String,
  nextStep: Schema.NullOr(NextStep)
}).annotate({ identifier: "NextStepOf" })

/** One step of one workflow: a task's current step, as a list filter names it. */
export const StepRef = Schema.Struct({
  workflowId: Schema.String.check(Schema.isMinLength(1), isMaxChars(256)),
  stepId: Schema.String.check(Schema.isMinLength(1), isMaxChars(256))
}).annotate({ identifier: "StepRef" })

export const Workflow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  tenantId: Schema.NullOr(Uuid)
}).annotate({ identifier: "Workflow" })

export const ConfigProperty = Schema.StructWithRest(
  Schema.Struct({
    type: optional(Schema.String),
    description: optional(Schema.String),
    pattern: optional(Schema.String),
    enum: optional(Schema.Array(Schema.Unknown)),
    default: optional(Schema.Unknown)
  }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)

/** A step's `dueIn`: an ISO 8601 duration of weeks, days, hours, minutes and seconds (calendar years and months vary in length). */
export const ISO_DURATION = /^P(?!$)(?:(\d{1,6})W)?(?:(\d{1,6})D)?(?:T(?!$)(?:(\d{1,6})H)?(?:(\d{1,6})M)?(?:(\d{1,9}(?:\.\d{1,3})?)S)?)?$/

export const RunbookStep = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  displayHint: Schema.Struct({ component: Schema.String, config: JsonObject.pipe(Schema.withDecodingDefaultKey(Effect.sync(() => ({})))) }),
  args: JsonObject.pipe(Schema.withDecodingDefaultKey(Effect.sync(() => ({})))),
  agentId: optional(Uuid.annotateKey({
    description: "Registry UUID of the agent this step is assigned to: only that agent may complete it through the agent tool server"
  })),
  assignees: optional(
    Schema.Array(
      Schema.String.check(Schema.isMinLength(1), isMaxChars(256)).annotate({
        description: "An actor as the edge names it (e.g. ann@acme.example), or a group as group:<name>"
      })
    ).check(Schema.isMaxLength(50)).annotateKey({
      description: "Who the step waits for besides its agent: actors and groups (group:<name>). With an identity " +
        "configured at the edge only they may act on it (403 naming them otherwise); without one it is shown, not enforced"
    })
  ),
  dueIn: optional(
    Schema.String.check(Schema.makeFilter((s: string) => ISO_DURATION.test(s) || "an ISO 8601 duration of weeks, days, hours, minutes, seconds (e.g. P2D, PT4H)"))
      .annotateKey({ description: "How long after the step becomes current it is due (ISO 8601 duration, e.g. P2D or PT4H)" })
  ),
  requireClaim: optional(Schema.Boolean.annotateKey({
    description: "Only the holder of the step's claim (POST /v1/tasks/:taskId/claim) may act on it"
  })),
  requireDistinctDecider: optional(Schema.Boolean.annotate({
    description: "Four-eyes: whoever completes this step (approves, rejects or submits its file) must be named by the edge " +
      "and must not have completed an earlier step of the task; otherwise 403"
  }))
})

export const Runbook = Schema.Struct({
  configSchema: Schema.Struct({
      global: optional(
        Schema.Struct({
          type: optional(Schema.String),
          properties: Schema.Record(Schema.String, ConfigProperty).pipe(Schema.withDecodingDefaultKey(Effect.succeed({})))
        })
      )
    }).pipe(Schema.withDecodingDefaultKey(Effect.succeed({}))),
  steps: Schema.Array(RunbookStep)
}).annotate({ identifier: "Runbook" })

export const Signal = Schema.Struct({
  taskId: withUuidFolded(Schema.String.annotate({ description: "Task or composite child id; resolved to its root task" })),
  name: Schema.String,
  payload: JsonObject,
  expectedStep: optional(Schema.String.check(Schema.isMinLength(1), isMaxChars(256)).annotate({
    description: "The step this signal is for (approve, reject, file_submitted, row actions). When given, the signal " +
      "applies to that step only: a repeat of the decision already taken on it is a no-op, a decision for a step " +
      "that is no longer current (or was decided the other way) is a 409 naming the current step. When omitted, " +
      "the step current when the signal is recorded."
  })),
  claimFirst: optional(Schema.Boolean.annotate({
    description: "A decision only: on a step that requires a claim and that nobody holds, claim it for the request's " +
      "actor in the same transaction first (a decision link's person cannot claim from a message); a claim another " +
      "holds is a 409 naming them"
  }))
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
  period: optional(Schema.String),
  schemaSlug: optional(Schema.String)
}).annotate({ identifier: "Document" })

export interface NewDocument {
  readonly taskId: string
  readonly source: string
  readonly filename: string
  readonly contentType: string
  readonly period?: string | undefined
  readonly schemaSlug?: string | undefined
  /** In memory (the JSON upload, ingest), or spooled to disk as it arrived (the raw upload). */
  readonly bytes: Uint8Array | SpooledBytes
}

/**
 * A file's bytes spooled to a file as they arrived (src/http/input/rawBody.ts): its length and SHA-256
 * known, read back a slice at a time, so a store holds a chunk of it, never the whole.
 */
export interface SpooledBytes {
  readonly length: number
  /** Hex SHA-256 of the bytes (the idempotency fingerprint's stand-in for them), made or read back when asked. */
  readonly sha256: Effect.Effect<string>
  /** `length` bytes from `offset` (fewer only at the end); valid until the next read (use or copy it first). */
  readonly read: (offset: number, length: number) => Effect.Effect<Uint8Array>
  /**
   * The spool file, when it is one a store may keep (spooled into UploadSpoolDirectory, see
   * ./WorkspaceClient.ts): its path, and a flush of its bytes to disk. A store that renames it
   * away owns it from then on; otherwise it is removed with the request.
   */
  readonly file?: { readonly path: string; readonly sync: () => Promise<void> } | undefined
}

export const isSpooled = (bytes: Uint8Array | SpooledBytes): bytes is SpooledBytes => !(bytes instanceof Uint8Array)

/** All the bytes in memory: for the stores that keep or send a document whole (memory, HTTP). */
export const wholeBytes = (bytes: Uint8Array | SpooledBytes): Effect.Effect<Uint8Array> =>
  isSpooled(bytes) ? Effect.map(bytes.read(0, bytes.length), (view) => Uint8Array.from(view)) : Effect.succeed(bytes)

export const DataBatch = Schema.Struct({
  taskId: Schema.String,
  kind: optional(Schema.String),
  rows: Schema.Array(Schema.Struct({ data: JsonObject, sourceRef: optional(Schema.Unknown) }))
}).annotate({ identifier: "DataBatch" })

export const GlConnection = Schema.Struct({
  tenantId: Uuid,
  provider: Schema.String,
  service: Schema.String,
  status: Schema.String,
  connectedAt: Schema.NullOr(Timestamp),
  metadata: Schema.Struct({
    name: optional(Schema.String),
    service: optional(Schema.String),
    updated_at: optional(Timestamp)
  })
}).annotate({ identifier: "GlConnection" })

export const RowCell = Scalar

export declare namespace Workspace {
  export type Tenant = typeof Tenant.Type
  export type Task = typeof Task.Type
  export type BoardTask = typeof BoardTask.Type
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
