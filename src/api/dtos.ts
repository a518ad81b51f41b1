/** Request bodies of spec §2, with the limits of §8. */
import * as Schema from "effect/Schema"
import { isMaxChars, utf8Length } from "./textLength.js"
import { optional } from "./optional.js"
import { FILE_SUBMITTED_SIGNAL } from "./stepSignals.js"
import { FileName, MediaType } from "./headerValues.js"
import { TaskIdInput, UuidInput } from "./ids.js"
import { jsonObject } from "./jsonObject.js"
import { jsonText } from "./jsonText.js"
import { textProblem } from "./jsonValue.js"
import { Scalar } from "./resources.js"

/**
 * A request body's own keys are closed: an unknown key is a 400 naming it, as the published
 * document says (`additionalProperties: false`), instead of being dropped without a word.
 * Effect 4 takes `onExcessProperty` only as a parse option of the whole decode, so both APIs set
 * it for every payload (`PAYLOAD_PARSE_OPTIONS`); this names the struct and words the refusal
 * as before (`is unexpected, expected: "a" | "b"`).
 */
export const closed = (identifier: string) =>
<S extends Schema.Top & { readonly fields: Schema.Struct.Fields }>(self: S): S["Rebuild"] =>
  self.annotate({
    identifier,
    messageUnexpectedKey: `is unexpected, expected: ${Object.keys(self.fields).map((k) => JSON.stringify(k)).join(" | ")}`
  })

/** How the APIs decode: every problem reported, with the value that caused it (the 400 quotes it). */
export const PARSE_OPTIONS = { errors: "all", reportInput: true } as const
/** How the APIs decode request bodies: as PARSE_OPTIONS, and an unknown key is an error (see `closed`). */
export const PAYLOAD_PARSE_OPTIONS = { ...PARSE_OPTIONS, onExcessProperty: "error" } as const
/**
 * How the APIs encode their answers and their clients decode them (success and error bodies):
 * Schema's defaults, the first problem. An answer that does not fit its schema is a fault of ours
 * or a mismatched version (a 500 or a 502), not a client's input to list in full; with every
 * problem collected, the workspace client's decode of a 50-task board allocated 62 KB beyond its
 * JSON.parse, 17 KB with the first (bench/PROFILE.md, S2, sixteenth pass).
 */
export const ANSWER_PARSE_OPTIONS = {} as const

const JsonObject = jsonObject({ identifier: "JsonObject", description: "Free-form JSON object" })

const NonEmpty = (max: number) => Schema.String.check(Schema.isMinLength(1), isMaxChars(max))

export const CreateTaskDto = Schema.Struct({
  workflowId: NonEmpty(256).annotate({ description: "An id returned by the workflows list" }),
  context: optional(JsonObject.annotateKey({
    description: "Forwarded into the workflow start payload; checked against the workflow's startParams"
  }))
}).pipe(closed("CreateTaskDto"))
export type CreateTaskDto = typeof CreateTaskDto.Type

/** The step a decision or row action is for: the id of the current step as /ui shows it. */
const StepId = NonEmpty(256).annotate({
  description: "The step this is for: the current step's id as GET /v1/tasks/:taskId/ui shows it (`step.id`). " +
    "Optional: without it, the step current when the request arrives. Named, a repeat of the decision already " +
    "taken on that step is a no-op answering as the first did, and a step that is no longer current (or was " +
    "decided the other way) is a 409 naming the current step, so a retry or a double click can never decide the " +
    "next step"
})

/** A decision's comments, however it is made (POST /action, a decision link's page): Unicode characters. */
const DecisionComments = optional(Schema.String.check(isMaxChars(10_000)).annotate({
  description: "Free text; recorded in the audit log; forwarded as `reason`"
}))

export const TaskActionDto = Schema.Struct({
  type: Schema.Literals(["approved", "rejected"]),
  step: optional(StepId),
  comments: DecisionComments
}).pipe(closed("TaskActionDto"))
export type TaskActionDto = typeof TaskActionDto.Type

/** A decision link's POST (src/workspace/server/linkRoutes.ts): the link names the rest. */
export const LinkDecisionDto = Schema.Struct({ comments: DecisionComments }).pipe(closed("LinkDecisionDto"))

/** Ledgers a row action may target (spec §8 allow-list). */
export const ROW_ACTION_LEDGERS = ["expenses"] as const

export const TaskRowActionDto = Schema.Struct({
  ledger: Schema.Literals(ROW_ACTION_LEDGERS).annotate({
    description: "Allow-list; only `expenses` is accepted",
    message: `ledger must be one of: ${ROW_ACTION_LEDGERS.join(", ")}`
  }),
  action: Schema.Literals(["edit_cell", "reject_row", "resolve_flag"]).annotate({
    description: "edit_cell and reject_row as the specification says; resolve_flag (this gateway's extension) marks a " +
      "row that needs attention as resolved (NEEDS_ATTENTION → RESOLVED), recorded in the timeline as row.resolved"
  }),
  step: optional(StepId),
  rowId: UuidInput,
  field: optional(NonEmpty(128).annotate({ description: "Column key; required for edit_cell" })),
  value: Schema.optionalKey(Scalar).annotateKey({
    description: "Scalar or null; required for edit_cell"
  }),
  expected: Schema.optionalKey(Scalar).annotateKey({
    description: "edit_cell: the value the editor saw; if the cell has changed since, nothing is written and the " +
      "answer is a 409 with currentValue and changedBy"
  })
}).pipe(
  Schema.check(Schema.makeFilter((dto) => {
    if (dto.action === "edit_cell") {
      if (dto.field === undefined) return { path: ["field"], issue: "field is required for edit_cell" }
      if (!("value" in dto)) return { path: ["value"], issue: "value is required for edit_cell" }
    }
    return true
  }, { toJsonSchema: () => ({ if: { properties: { action: { const: "edit_cell" } } }, then: { required: ["field", "value"] } }) })),
  closed("TaskRowActionDto")
)
export type TaskRowActionDto = typeof TaskRowActionDto.Type

/**
 * The highest seq a client may choose (2^31-1): fits a signed 32-bit integer in any client (Java
 * int, PostgreSQL integer) and is more events than one producer's stream on a task will hold.
 * A producer's seqs are its own (unique per task and source): nothing the gateway writes takes
 * one, so the top seq blocks no one but the producer that used it.
 */
export const CLIENT_SEQ_MAX = 2_147_483_647

/** The highest seq the workspace service accepts (2^52), as it always has. */
export const WORKSPACE_SEQ_MAX = 2 ** 52

const seqUpTo = (max: number) => {
  const message = `must be an integer from 0 to ${max}`
  return Schema.Finite.check(Schema.isInt({ message }).abort(), Schema.isBetween({ minimum: 0, maximum: max }, { message }))
    .annotate({
    description: `Monotonic per task / event stream; 0..${max}`
  })
}

/**
 * Sources only the gateway writes: the workspace engine's (`workspace`), the audit's (`audit`)
 * and an agent's (`agent:<uuid>`, written by the agent tool server for the agent it
 * authenticated). A client posting one would forge an audit entry.
 */
export const isReservedEventSource = (source: string) => {
  // Compared as a reader sees it: any case, compatibility forms (full-width letters) decomposed
  // and their marks dropped (`AUDİT`), invisible and space characters dropped (` audit`,
  // `\u200baudit`, `au\u00addit`), and letters of other scripts that look like the Latin ones
  // read as those (Cyrillic `аudit`, Greek `wοrkspace`, small capitals `ᴀᴜᴅɪᴛ`); `l`, `1` and `i`
  // alike and `0` as `o` (`audlt`, `aud1t`, `w0rkspace`), as signal names are read.
  const seen = source.normalize("NFKD").replace(INVISIBLE, "").toLowerCase()
    .replace(LOOK_ALIKE_LETTERS, (c) => LATIN_OF[c] ?? c).replace(COLON_LIKE, ":")
  const read = seen.replace(/[l1]/g, "i").replace(/0/g, "o")
  return read === "workspace" || read === "audit" || read.startsWith("agent:")
}

/**
 * A source the gateway writes, exactly as it writes it: what its own records carry. (A look-alike
 * is refused from producers by isReservedEventSource, and is no gateway source either.)
 */
const isGatewaySource = (source: string) => source === "audit" || source === "workspace" || /^agent:[^\s]+$/u.test(source)

/**
 * Lower-case letters of other scripts drawn like the Latin letters of `workspace`, `audit` and
 * `agent` (Unicode's confusables, UTS #39, for these letters), and the dotless i.
 */
const LATIN_OF: Readonly<Record<string, string>> = {
  "\u0430": "a", "\u03b1": "a", "\u0251": "a", // Cyrillic а, Greek α, Latin ɑ
  "\u0435": "e", "\u03b5": "e", "\u0454": "e", // Cyrillic е, Greek ε, Ukrainian є
  "\u043e": "o", "\u03bf": "o", "\u03c3": "o", "\u0585": "o", // Cyrillic о, Greek ο σ, Armenian օ
  "\u0440": "p", "\u03c1": "p", // Cyrillic р, Greek ρ
  "\u0441": "c", "\u03f2": "c", // Cyrillic с, Greek lunate sigma
  "\u0455": "s", // Cyrillic ѕ
  "\u0456": "i", "\u0131": "i", "\u03b9": "i", "\u04cf": "i", // Cyrillic і ӏ, dotless ı, Greek ι
  "\u0501": "d", // Cyrillic ԁ
  "\u051d": "w", "\u0461": "w", "\u03c9": "w", // Cyrillic ԝ ѡ, Greek ω
  "\u043a": "k", "\u03ba": "k", // Cyrillic к, Greek κ
  "\u0433": "r", "\u0280": "r", // Cyrillic г, Latin small capital ʀ
  "\u0578": "n", "\u03b7": "n", "\u043f": "n", // Armenian ո, Greek η, Cyrillic п
  "\u0261": "g", "\u0581": "g", // Latin ɡ, Armenian ց
  "\u03c4": "t", "\u0442": "t", // Greek τ, Cyrillic т
  "\u03c5": "u", "\u057d": "u", "\u028b": "u", // Greek υ, Armenian ս, Latin ʋ
  // Latin small capitals (not folded by NFKD or lower case)
  "\u1d00": "a", "\u1d04": "c", "\u1d05": "d", "\u1d07": "e", "\u0262": "g", "\u026a": "i", "\u1d0b": "k",
  "\u0274": "n", "\u1d0f": "o", "\u1d18": "p", "\ua731": "s", "\u1d1b": "t", "\u1d1c": "u", "\u1d21": "w"
}
/** Marks, controls, formats, spaces, and what draws nothing: Hangul fillers, the Braille blank. */
const INVISIBLE = /[\p{M}\p{Cc}\p{Cf}\p{Z}\s\p{Default_Ignorable_Code_Point}\u2800]/gu
/** Characters drawn as a colon (`agent∶x`): ratio, triangular colons, modifier colons, the Ethiopic wordspace, the vertical two-dot leader. */
export const COLON_LIKE = /[\u2236\u02d0\u02f8\ua789\u0589\u05c3\u2982\ufe13\ufe55\uff1a\u1361\ufe30]/gu
const LOOK_ALIKE_LETTERS = new RegExp(`[${Object.keys(LATIN_OF).join("")}]`, "gu")

/**
 * The most UTF-8 bytes one event's payload JSON may hold (1 MiB, the default page budget
 * SVC_EVENTS_PAGE_BYTES). A timeline answer or stream page stops after the event that takes it
 * past its budget, and a larger event goes out alone: without a cap one 30 MiB event (a body
 * just under SVC_MAX_BODY_BYTES) made every page that holds it 30 MiB, and 15 streams that did
 * not read pinned 750 MB until their stall timeout.
 */
export const TASK_EVENT_PAYLOAD_MAX_BYTES = 1024 * 1024

const EventPayload = jsonObject({
  description: `Free-form JSON object, at most ${TASK_EVENT_PAYLOAD_MAX_BYTES} bytes as UTF-8 JSON`
}).check(
  Schema.makeFilter((payload) => {
    const bytes = utf8Length(jsonText(payload))
    return bytes <= TASK_EVENT_PAYLOAD_MAX_BYTES ||
      `${bytes} bytes of JSON exceeds the ${TASK_EVENT_PAYLOAD_MAX_BYTES}-byte cap of one event`
  })
)

const taskEventFields = {
  type: NonEmpty(128).annotate({ description: "e.g. reasoning.delta, step.completed, source.submitted" }),
  source: NonEmpty(64).annotate({ description: "Producer, typically worker" }),
  sourceLabel: optional(Schema.String.check(isMaxChars(256))),
  seq: seqUpTo(CLIENT_SEQ_MAX),
  payload: EventPayload,
  groupKey: optional(NonEmpty(128).annotate({ description: "Thread/group id for one panel" }))
}

/**
 * A producer's source: not one that reads as the gateway's. Readers trust the store's `origin`
 * mark, not this; the refusal keeps a producer's event from even looking like the record.
 */
const producerSource = taskEventFields.source.check(
  Schema.makeFilter((s) => !isReservedEventSource(s), {
    message: `"workspace", "audit" and "agent:..." are written by the gateway only`
  })
).annotate({
  description: "Producer, typically worker. Not `workspace`, `audit` or `agent:...`: those the gateway writes itself"
})

export const TaskEventDto = Schema.Struct({ ...taskEventFields, source: producerSource }).pipe(closed("TaskEventDto"))
export type TaskEventDto = typeof TaskEventDto.Type

/** TaskEventDto as the workspace service takes it: seq up to WORKSPACE_SEQ_MAX, the same sources refused. */
export const WorkspaceTaskEventDto = Schema.Struct({ ...taskEventFields, source: producerSource, seq: seqUpTo(WORKSPACE_SEQ_MAX) }).pipe(
  // The same name in the workspace service's document as before its bound was set apart.
  closed("TaskEventDto")
)

/**
 * An event the gateway vouches for (the workspace port's recordEvent): its own record (origin
 * `gateway`: the store reads it with seq = position), or an agent's own event (origin `agent`,
 * source `agent:<uuid>` authenticated by the tool server; without a seq it takes the next of its
 * source). Only the gateway sends these: the workspace service takes them on its admin listener.
 */
export const TimelineRecord = Schema.Struct({
  origin: Schema.Literals(["gateway", "agent"]),
  type: taskEventFields.type,
  source: taskEventFields.source,
  sourceLabel: taskEventFields.sourceLabel,
  seq: optional(seqUpTo(WORKSPACE_SEQ_MAX)),
  payload: EventPayload,
  groupKey: taskEventFields.groupKey
}).pipe(
  closed("TimelineRecord"),
  // Only the gateway's own sources: a record can never stand in a producer's stream or take its seqs.
  Schema.check(Schema.makeFilter((r) => {
    if (r.origin === "agent" && !/^agent:[^\s]+$/u.test(r.source)) {
      return { path: ["source"], issue: `an agent's event has source "agent:<uuid>", got ${JSON.stringify(r.source.slice(0, 64))}` }
    }
    if (r.origin === "gateway" && !isGatewaySource(r.source)) {
      return { path: ["source"], issue: `the gateway's record has source "audit", "workspace" or "agent:<uuid>", got ${JSON.stringify(r.source.slice(0, 64))}` }
    }
    if (r.origin === "gateway" && r.seq !== undefined) {
      return { path: ["seq"], issue: "the gateway's record takes no seq (it is read as its position)" }
    }
    return true
  }))
)
export type TimelineRecord = typeof TimelineRecord.Type

/** YYYY-MM with a real month (2026-13 is refused). */
export const Period = Schema.String.check(
  Schema.isPattern(/^\d{4}-(0[1-9]|1[0-2])$/u, { message: "period must be YYYY-MM with a month 01-12" })
).annotate({ identifier: "Period", description: "Accounting period, YYYY-MM" })

/** Fields shared by upload and ingest: everything but where the bytes come from. */
const FileMetaFields = {
  source: NonEmpty(256).annotate({ description: "Stable source identifier; workflow activities query by it" }),
  fileName: optional(FileName.annotateKey({ description: "Override; otherwise derived" })),
  contentType: optional(MediaType.annotateKey({
    description: "MIME type; guessed from the file name when omitted"
  })),
  period: optional(Period),
  schemaSlug: optional(NonEmpty(128)),
  signalTaskId: optional(TaskIdInput),
  signalName: optional(NonEmpty(128).annotate({
    description: `Signal name to fire after persist (\`${FILE_SUBMITTED_SIGNAL}\` completes a FILE_UPLOAD step; not another ` +
      "step signal, nor one that reads as one: `approve` and `reject` only a decision sends, `user_action` only a row action)"
  }))
}

/** Published beside the rule below: each of the two requires the other. */
export const signalPairSchema = { dependentRequired: { signalTaskId: ["signalName"], signalName: ["signalTaskId"] } }

/** signalTaskId and signalName name one signal: both or neither. */
export const signalPair = <A extends { readonly signalTaskId?: string | undefined; readonly signalName?: string | undefined }>(
  dto: A
): true | { readonly path: ReadonlyArray<PropertyKey>; readonly issue: string } =>
  (dto.signalTaskId === undefined) === (dto.signalName === undefined) ||
  {
    path: [dto.signalTaskId === undefined ? "signalTaskId" : "signalName"],
    issue: "signalTaskId and signalName must be given together"
  }

export const UploadFileDto = Schema.Struct({
  ...FileMetaFields,
  data: Schema.String.annotate({ description: "Base64 of the file bytes", contentEncoding: "base64" })
}).pipe(Schema.check(Schema.makeFilter(signalPair, { toJsonSchema: () => signalPairSchema })), closed("UploadFileDto"))
export type UploadFileDto = typeof UploadFileDto.Type

export const FileRef = Schema.StructWithRest(
  Schema.Struct({ provider: NonEmpty(64).annotate({ description: "local, url, inline_base64, ..." }) }),
  [Schema.Record(Schema.String, Schema.Unknown)]
).annotate({
  identifier: "FileRef",
  description: "Provider-tagged file reference; per-provider fields are validated by the file fetcher"
})
export type FileRef = typeof FileRef.Type

export const IngestFileDto = Schema.Struct({ ...FileMetaFields, fileRef: FileRef }).pipe(
  Schema.check(Schema.makeFilter(signalPair, { toJsonSchema: () => signalPairSchema })),
  closed("IngestFileDto")
)
export type IngestFileDto = typeof IngestFileDto.Type

/**
 * The raw upload's fields, in its query string (the body is the file, its Content-Type the
 * file's type): the upload's fields but the type and the bytes.
 */
export const RawUploadQuery = Schema.Struct({
  source: FileMetaFields.source,
  fileName: FileMetaFields.fileName,
  period: FileMetaFields.period,
  schemaSlug: FileMetaFields.schemaSlug,
  signalTaskId: FileMetaFields.signalTaskId,
  signalName: FileMetaFields.signalName
}).pipe(
  Schema.check(Schema.makeFilter(signalPair, { toJsonSchema: () => signalPairSchema })),
  // A body's strings are checked on input (src/http/input/jsonInput.ts); a query's are not: stored as sent, or refused.
  Schema.check(Schema.makeFilter((q: Readonly<Record<string, string | undefined>>) => {
    for (const [key, value] of Object.entries(q)) {
      const problem = value === undefined ? undefined : textProblem(value)
      if (problem !== undefined) return { path: [key], issue: problem }
    }
    return true
  }, { toJsonSchema: () => ({}) }))
)
export type RawUploadQuery = typeof RawUploadQuery.Type

/** Shared by both upload paths once the bytes are in hand. */
export type FileMeta = Omit<UploadFileDto, "data">

export const DataIngestEvent = Schema.Struct({
  data: JsonObject,
  sourceRef: optional(Schema.Unknown.annotateKey({ description: "Free-form provenance JSON" }))
}).pipe(closed("DataIngestEvent"))

export const DataIngestDto = Schema.Struct({
  data: optional(JsonObject.annotateKey({ description: "Single-row body; exactly one of data / events" })),
  events: optional(Schema.Array(DataIngestEvent).check(Schema.isMinLength(1), Schema.isMaxLength(10_000)).annotate({
    description: "Bulk body; exactly one of data / events"
  })),
  sourceRef: optional(Schema.Unknown.annotateKey({ description: "Ignored when events is given" })),
  kind: optional(NonEmpty(128).annotate({ description: "Discriminator shared by the batch" })),
  signalTaskId: optional(TaskIdInput),
  signalName: optional(NonEmpty(128).annotate({
    description: `Signal name, one per record (\`${FILE_SUBMITTED_SIGNAL}\` completes a FILE_UPLOAD step with the records ` +
      "as its source); not another step signal, nor one that reads as one: `approve` and `reject` only a decision sends, " +
      "`user_action` only a row action"
  }))
}).pipe(
  Schema.check(Schema.makeFilter((dto) =>
    (dto.data === undefined) === (dto.events === undefined)
      ? { path: ["data"], issue: "exactly one of data / events must be set" }
      : signalPair(dto), {
    // Inside allOf: a top-level oneOf would make Effect replace the whole object schema.
    toJsonSchema: () => ({ allOf: [{ oneOf: [{ required: ["data"] }, { required: ["events"] }] }], ...signalPairSchema })
  })),
  closed("DataIngestDto")
)
export type DataIngestDto = typeof DataIngestDto.Type

export const UpdateSubledgerCellDto = Schema.Struct({
  field: NonEmpty(128).annotate({ description: "Column key, checked against the ledger's allow-list" }),
  value: Scalar.annotateKey({ description: "Scalar or null; validated and coerced per ledger" }),
  expected: Schema.optionalKey(Scalar).annotateKey({
    description: "The value the editor saw; if the cell has changed since, nothing is written and the answer is a 409 " +
      "with currentValue and changedBy"
  })
}).pipe(closed("UpdateSubledgerCellDto"))
export type UpdateSubledgerCellDto = typeof UpdateSubledgerCellDto.Type

export const GlConnectSessionDto = Schema.Struct({
  serviceId: optional(NonEmpty(128).annotate({
    description: "Preselects a provider; omitted lets the user pick"
  }))
}).pipe(closed("GlConnectSessionDto"))
