/** Request bodies of spec §2, with the limits of §8. */
import * as Schema from "effect/Schema"
import { FileName, MediaType } from "./headerValues.js"
import { TASK_ID_MAX_LENGTH, Uuid } from "./ids.js"
import { jsonText } from "./jsonText.js"
import { Scalar } from "./resources.js"

/**
 * A request body's own keys are closed: an unknown key is a 400 naming it, as the published
 * document says (`additionalProperties: false`), instead of being dropped without a word.
 */
export const closed = (identifier: string) => <S extends Schema.Annotable.All>(self: S): Schema.Annotable.Self<S> =>
  self.annotations({ identifier, parseOptions: { onExcessProperty: "error" } }) as Schema.Annotable.Self<S>

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  identifier: "JsonObject",
  description: "Free-form JSON object"
})

const NonEmpty = (max: number) => Schema.String.pipe(Schema.minLength(1), Schema.maxLength(max))

export const CreateTaskDto = Schema.Struct({
  workflowId: NonEmpty(256).annotations({ description: "An id returned by the workflows list" }),
  context: Schema.optional(JsonObject).annotations({
    description: "Forwarded into the workflow start payload; checked against the workflow's startParams"
  })
}).pipe(closed("CreateTaskDto"))
export type CreateTaskDto = typeof CreateTaskDto.Type

/** The step a decision or row action is for: the id of the current step as /ui shows it. */
const StepId = NonEmpty(256).annotations({
  description: "The step this is for: the current step's id as GET /v1/tasks/:taskId/ui shows it (`step.id`). " +
    "Optional: without it, the step current when the request arrives. Named, a repeat of the decision already " +
    "taken on that step is a no-op answering as the first did, and a step that is no longer current (or was " +
    "decided the other way) is a 409 naming the current step, so a retry or a double click can never decide the " +
    "next step"
})

export const TaskActionDto = Schema.Struct({
  type: Schema.Literal("approved", "rejected"),
  step: Schema.optional(StepId),
  comments: Schema.optional(Schema.String.pipe(Schema.maxLength(10_000))).annotations({
    description: "Free text; recorded in the audit log; forwarded as `reason`"
  })
}).pipe(closed("TaskActionDto"))
export type TaskActionDto = typeof TaskActionDto.Type

/** Ledgers a row action may target (spec §8 allow-list). */
export const ROW_ACTION_LEDGERS = ["expenses"] as const

export const TaskRowActionDto = Schema.Struct({
  ledger: Schema.Literal(...ROW_ACTION_LEDGERS).annotations({
    description: "Allow-list; only `expenses` is accepted",
    message: () => `ledger must be one of: ${ROW_ACTION_LEDGERS.join(", ")}`
  }),
  action: Schema.Literal("edit_cell", "reject_row"),
  step: Schema.optional(StepId),
  rowId: Uuid,
  field: Schema.optional(NonEmpty(128)).annotations({ description: "Column key; required for edit_cell" }),
  value: Schema.optionalWith(Scalar, { exact: true }).annotations({
    description: "Scalar or null; required for edit_cell"
  })
}).pipe(
  Schema.filter((dto) => {
    if (dto.action === "edit_cell") {
      if (dto.field === undefined) return { path: ["field"], message: "field is required for edit_cell" }
      if (!("value" in dto)) return { path: ["value"], message: "value is required for edit_cell" }
    }
    return true
  }, { jsonSchema: { if: { properties: { action: { const: "edit_cell" } } }, then: { required: ["field", "value"] } } }),
  closed("TaskRowActionDto")
)
export type TaskRowActionDto = typeof TaskRowActionDto.Type

/**
 * The highest seq a client may choose (2^31-1). The workspace engine writes its own events at
 * the seqs after a task's highest (max+1), so every seq must leave it room: with client seqs up
 * to 2^53-1 the engine's next one could not be represented, every delivery collided and the
 * task never moved again (issue 22 item 3). 2^31-1 fits a signed 32-bit integer in any client
 * (Java int, PostgreSQL integer), is more events than one task's timeline will ever hold, and
 * leaves the engine 2^53 - 2^31 seqs above it.
 */
export const CLIENT_SEQ_MAX = 2_147_483_647

/**
 * The highest seq the workspace service accepts (2^52): above the clients' cap, because the
 * gateway appends agents' events at the next free seq, which follows the engine's; still 2^52
 * events short of where seqs stop being exact integers.
 */
export const WORKSPACE_SEQ_MAX = 2 ** 52

const seqUpTo = (max: number) => {
  const message = () => `must be an integer from 0 to ${max}`
  return Schema.Number.pipe(Schema.int({ message }), Schema.between(0, max, { message })).annotations({
    description: `Monotonic per task / event stream; 0..${max}`
  })
}

/**
 * Sources only the gateway writes: the workspace engine's (`workspace`), the audit's (`audit`)
 * and an agent's (`agent:<uuid>`, written by the agent tool server for the agent it
 * authenticated). A client posting one would forge an audit entry.
 */
export const isReservedEventSource = (source: string) => {
  // Compared as a reader sees it: any case, compatibility forms (full-width letters) composed,
  // invisible and space characters dropped (` audit`, `\u200baudit`, `au\u00addit` read as `audit`).
  const seen = source.normalize("NFKC").replace(/[\p{Cc}\p{Cf}\p{Z}\s]/gu, "").toLowerCase()
  return seen === "workspace" || seen === "audit" || seen.startsWith("agent:")
}

/**
 * The most UTF-8 bytes one event's payload JSON may hold (1 MiB, the default page budget
 * SVC_EVENTS_PAGE_BYTES). A timeline answer or stream page stops after the event that takes it
 * past its budget, and a larger event goes out alone: without a cap one 30 MiB event (a body
 * just under SVC_MAX_BODY_BYTES) made every page that holds it 30 MiB, and 15 streams that did
 * not read pinned 750 MB until their stall timeout.
 */
export const TASK_EVENT_PAYLOAD_MAX_BYTES = 1024 * 1024

/** UTF-8 length of a string without Node's Buffer (this module is also built for the browser). */
const utf8Length = (s: string): number => {
  let n = s.length
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    // 2 bytes up to U+07FF, 3 up to U+FFFF; a surrogate pair (2 units) is 4 bytes.
    if (c >= 0x80) n += c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 1 : 2
  }
  return n
}

const EventPayload = JsonObject.pipe(
  Schema.filter((payload) => {
    const bytes = utf8Length(jsonText(payload))
    return bytes <= TASK_EVENT_PAYLOAD_MAX_BYTES ||
      `${bytes} bytes of JSON exceeds the ${TASK_EVENT_PAYLOAD_MAX_BYTES}-byte cap of one event`
  })
).annotations({ description: `Free-form JSON object, at most ${TASK_EVENT_PAYLOAD_MAX_BYTES} bytes as UTF-8 JSON` })

const taskEventFields = {
  type: NonEmpty(128).annotations({ description: "e.g. reasoning.delta, step.completed, source.submitted" }),
  source: NonEmpty(64).annotations({ description: "Producer, typically worker" }),
  sourceLabel: Schema.optional(Schema.String.pipe(Schema.maxLength(256))),
  seq: seqUpTo(CLIENT_SEQ_MAX),
  payload: EventPayload,
  groupKey: Schema.optional(NonEmpty(128)).annotations({ description: "Thread/group id for one panel" })
}

export const TaskEventDto = Schema.Struct({
  ...taskEventFields,
  source: taskEventFields.source.pipe(
    Schema.filter((s) => !isReservedEventSource(s), {
      message: () => `"workspace", "audit" and "agent:..." are written by the gateway only`
    })
  ).annotations({
    description: "Producer, typically worker. Not `workspace`, `audit` or `agent:...`: those the gateway writes itself"
  })
}).pipe(closed("TaskEventDto"))
export type TaskEventDto = typeof TaskEventDto.Type

/** TaskEventDto as the workspace service takes it: seq up to WORKSPACE_SEQ_MAX. */
export const WorkspaceTaskEventDto = Schema.Struct({ ...taskEventFields, seq: seqUpTo(WORKSPACE_SEQ_MAX) }).pipe(
  // The same name in the workspace service's document as before its bound was set apart.
  closed("TaskEventDto")
)

/** YYYY-MM with a real month (2026-13 is refused). */
export const Period = Schema.String.pipe(
  Schema.pattern(/^\d{4}-(0[1-9]|1[0-2])$/, { message: () => "period must be YYYY-MM with a month 01-12" }),
  Schema.annotations({ identifier: "Period", description: "Accounting period, YYYY-MM" })
)

/** Fields shared by upload and ingest: everything but where the bytes come from. */
const FileMetaFields = {
  source: NonEmpty(256).annotations({ description: "Stable source identifier; workflow activities query by it" }),
  fileName: Schema.optional(FileName).annotations({ description: "Override; otherwise derived" }),
  contentType: Schema.optional(MediaType).annotations({
    description: "MIME type; guessed from the file name when omitted"
  }),
  period: Schema.optional(Period),
  schemaSlug: Schema.optional(NonEmpty(128)),
  signalTaskId: Schema.optional(NonEmpty(TASK_ID_MAX_LENGTH)).annotations({ description: "Workflow id to signal after persist" }),
  signalName: Schema.optional(NonEmpty(128)).annotations({ description: "Signal name to fire after persist" })
}

/** Published beside the rule below: each of the two requires the other. */
export const signalPairSchema = { dependentRequired: { signalTaskId: ["signalName"], signalName: ["signalTaskId"] } }

/** signalTaskId and signalName name one signal: both or neither. */
export const signalPair = <A extends { readonly signalTaskId?: string | undefined; readonly signalName?: string | undefined }>(
  dto: A
) =>
  (dto.signalTaskId === undefined) === (dto.signalName === undefined) ||
  {
    path: [dto.signalTaskId === undefined ? "signalTaskId" : "signalName"],
    message: "signalTaskId and signalName must be given together"
  }

export const UploadFileDto = Schema.Struct({
  ...FileMetaFields,
  data: Schema.String.annotations({ description: "Base64 of the file bytes", contentEncoding: "base64" })
}).pipe(Schema.filter(signalPair, { jsonSchema: signalPairSchema }), closed("UploadFileDto"))
export type UploadFileDto = typeof UploadFileDto.Type

export const FileRef = Schema.Struct(
  { provider: NonEmpty(64).annotations({ description: "local, url, inline_base64, ..." }) },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({
  identifier: "FileRef",
  description: "Provider-tagged file reference; per-provider fields are validated by the file fetcher"
})
export type FileRef = typeof FileRef.Type

export const IngestFileDto = Schema.Struct({ ...FileMetaFields, fileRef: FileRef }).pipe(
  Schema.filter(signalPair, { jsonSchema: signalPairSchema }),
  closed("IngestFileDto")
)
export type IngestFileDto = typeof IngestFileDto.Type

/** Shared by both upload paths once the bytes are in hand. */
export type FileMeta = Omit<UploadFileDto, "data">

export const DataIngestEvent = Schema.Struct({
  data: JsonObject,
  sourceRef: Schema.optional(Schema.Unknown).annotations({ description: "Free-form provenance JSON" })
}).pipe(closed("DataIngestEvent"))

export const DataIngestDto = Schema.Struct({
  data: Schema.optional(JsonObject).annotations({ description: "Single-row body; exactly one of data / events" }),
  events: Schema.optional(Schema.Array(DataIngestEvent).pipe(Schema.minItems(1), Schema.maxItems(10_000))).annotations({
    description: "Bulk body; exactly one of data / events"
  }),
  sourceRef: Schema.optional(Schema.Unknown).annotations({ description: "Ignored when events is given" }),
  kind: Schema.optional(NonEmpty(128)).annotations({ description: "Discriminator shared by the batch" }),
  signalTaskId: Schema.optional(NonEmpty(TASK_ID_MAX_LENGTH)),
  signalName: Schema.optional(NonEmpty(128))
}).pipe(
  Schema.filter((dto) =>
    (dto.data === undefined) === (dto.events === undefined)
      ? { path: ["data"], message: "exactly one of data / events must be set" }
      : signalPair(dto), {
    // Inside allOf: a top-level oneOf would make Effect replace the whole object schema.
    jsonSchema: { allOf: [{ oneOf: [{ required: ["data"] }, { required: ["events"] }] }], ...signalPairSchema }
  }),
  closed("DataIngestDto")
)
export type DataIngestDto = typeof DataIngestDto.Type

export const UpdateSubledgerCellDto = Schema.Struct({
  field: NonEmpty(128).annotations({ description: "Column key, checked against the ledger's allow-list" }),
  value: Scalar.annotations({ description: "Scalar or null; validated and coerced per ledger" })
}).pipe(closed("UpdateSubledgerCellDto"))
export type UpdateSubledgerCellDto = typeof UpdateSubledgerCellDto.Type

export const GlConnectSessionDto = Schema.Struct({
  serviceId: Schema.optional(NonEmpty(128)).annotations({
    description: "Preselects a provider; omitted lets the user pick"
  })
}).pipe(closed("GlConnectSessionDto"))
