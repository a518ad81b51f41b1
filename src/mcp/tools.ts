/**
 * The agent tool server's tools. Each one takes the DTO of the matching /v1 endpoint (plus the
 * path parameters) and calls the same service function as its HTTP handler
 * (src/services/*, src/files/*): no rule is restated here. What is the tool server's own: the
 * event source is the calling agent, writes are attributed to it in the task's timeline
 * (./AgentTimeline.ts), and a step assigned to another agent cannot be completed (./assignment.ts).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { DEFAULT_EVENT_PAGE_BYTES, EVENT_PAGE_MAX, PositionParam, TimelinePage } from "../api/eventPaging.js"
import { CreateTaskDto, DataIngestDto, IngestFileDto, signalPair, signalPairSchema, TaskActionDto, TaskEventDto, closed } from "../api/dtos.js"
import { BadRequest, PayloadTooLarge } from "../api/errors.js"
import { AwaitingParam, TASK_PAGE_MAX, TASK_STATUSES } from "../api/taskListing.js"
import { FileName, MediaType } from "../api/headerValues.js"
import { optional } from "../api/optional.js"
import { isMaxChars } from "../api/textLength.js"
import { Uuid, UuidInput } from "../api/ids.js"
import {
  CreatedTask,
  DataIngestResult,
  EntitySummary,
  FileDocument,
  Ok,
  TaskEvent,
  TaskSummary,
  UiState,
  UploadResult,
  WorkflowEntry
} from "../api/resources.js"
import { TaskPath } from "../api/tasks.js"
import { decodeBase64 } from "../files/base64.js"
import { downloadUrl } from "../files/downloadUrl.js"
import { ingestFile, listFiles, openFile } from "../files/operations.js"
import { persistFile } from "../files/pipeline.js"
import { ingestData } from "../services/dataIngest.js"
import { inboxPage } from "../services/inbox.js"
import { INBOX_PAGE_MAX, InboxPage } from "../api/inbox.js"
import { createTask, listEntities, listEntityWorkflows, listTaskPage, stepRefs, stepsWhere } from "../services/entities.js"
import { ACTION_SIGNAL, decideTask, uiStateOf } from "../services/tasks.js"
import { eventPageBytesSetting, readTimelinePage, recordTaskEvent } from "../services/taskEvents.js"
import { Tenant } from "../services/Tenant.js"
import { WorkspaceClient } from "../upstream/WorkspaceClient.js"
import { isTerminalStatus } from "../api/taskListing.js"
import { currentStepOf, requireMayComplete } from "./assignment.js"
import { McpConfig } from "./McpConfig.js"
import { type AnyTool, reply, tool, type ToolContext, type ToolFailure, type ToolServices } from "./toolkit.js"
import { agentLabel, agentSource, AgentTimeline, ownWrite } from "./AgentTimeline.js"

const EntityPath = Schema.Struct({ entityId: UuidInput })
const NO_ARGUMENTS = "is unexpected: this tool takes no arguments"
/** No arguments (MCP sends an object; any key in it is a 400 naming it). */
const NoInput = Schema.Struct({}).annotate({ messageUnexpectedKey: NO_ARGUMENTS }).check(
  Schema.makeFilter((args) => {
    const [key] = Array.isArray(args) ? ["request"] : Object.keys(args)
    return key === undefined || { path: [key], issue: NO_ARGUMENTS }
  })
)

/**
 * A DTO with path parameters in front (the tool's arguments): its own checks kept, which hold
 * for the DTO's fields whatever else the arguments carry.
 */
const withPath = <P extends Schema.Struct.Fields, D extends Schema.Struct.Fields>(path: P, dto: Schema.Struct<D>) =>
  dto.mapFields((fields): P & D => ({ ...path, ...fields }), { unsafePreserveChecks: true })

/**
 * A write that may carry a signal: a step-deciding one must not go to a step assigned to another
 * agent. Returns the step checked, which the write then names (`expectedStep`): if the task has
 * moved on by the time the write commits (a file fetched meanwhile), the write is a 409 rather
 * than a signal that completes whatever step is current then, perhaps another agent's.
 */
const checkSignal = (
  context: ToolContext,
  dto: { readonly signalTaskId?: string | undefined; readonly signalName?: string | undefined }
): Effect.Effect<{ readonly expectedStep?: string }, ToolFailure, ToolServices> =>
  dto.signalTaskId !== undefined && dto.signalName !== undefined
    ? Effect.map(
      requireMayComplete(context.agent, dto.signalTaskId, dto.signalName),
      Option.match({ onNone: () => ({}), onSome: (current) => ({ expectedStep: current.stepId }) })
    )
    : Effect.succeed({})

const signalOf = (dto: { readonly signalTaskId?: string | undefined; readonly signalName?: string | undefined }) =>
  dto.signalTaskId !== undefined && dto.signalName !== undefined
    ? { signalTaskId: dto.signalTaskId, signalName: dto.signalName }
    : {}

const record = (context: ToolContext, taskId: string, name: string, details: Record<string, unknown>) =>
  Effect.flatMap(AgentTimeline, (timeline) => timeline.recordAction(context.agent, taskId, name, details))

// ---------------------------------------------------------------------------------------------
// Finding work

const listEntitiesTool = tool({
  name: "list_entities",
  title: "List entities",
  description: "The tenant's entities (legal entities, companies) with their ids. Start here to find tasks: " +
    "list_tasks and list_workflows take an entityId.",
  input: NoInput,
  output: Schema.Struct({ entities: Schema.Array(EntitySummary) }),
  readOnly: true,
  run: () => Effect.map(listEntities, (entities) => reply({ entities }))
})

const inboxTool = tool({
  name: "list_inbox",
  title: "What waits for you",
  description: "The waiting steps of the tenant's running tasks across entities, oldest waiting first, as GET /v1/inbox " +
    "gives them: by default those assigned to you (assignee `me`: steps naming your agent); `assignee` an actor or " +
    "group:<name> for others'. Each item: task, entity, step, waitingSince, dueAt, overdue, assignees, claim, mayAct. " +
    "Filters `awaiting`, `entityId`, `workflowId`, `overdue`; `limit` and `cursor` (the answer's nextCursor) page.",
  input: Schema.Struct({
    assignee: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), isMaxChars(262)).annotate({
      description: "me (default), or an actor or group:<name>"
    })),
    awaiting: Schema.optionalKey(AwaitingParam),
    entityId: Schema.optionalKey(EntityPath.fields.entityId),
    workflowId: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), isMaxChars(256))),
    overdue: Schema.optionalKey(Schema.Boolean),
    limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: INBOX_PAGE_MAX }))),
    cursor: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(512)).annotate({ description: "The nextCursor of an earlier answer" }))
  }).pipe(closed("ListInboxInput")),
  output: InboxPage,
  readOnly: true,
  run: (input) =>
    Effect.map(
      inboxPage({
        assignee: input.assignee ?? "me",
        ...(input.awaiting !== undefined ? { awaiting: input.awaiting } : {}),
        ...(input.entityId !== undefined ? { entityId: input.entityId } : {}),
        ...(input.workflowId !== undefined ? { workflowId: input.workflowId } : {}),
        ...(input.overdue === true ? { overdue: "true" as const } : {}),
        ...(input.limit !== undefined ? { limit: input.limit } : {}),
        ...(input.cursor !== undefined ? { cursor: input.cursor } : {})
      }),
      (page) => reply(page)
    )
})

const listWorkflowsTool = tool({
  name: "list_workflows",
  title: "List startable workflows",
  description: "The workflows an entity can start, each with its startParams (key, type, pattern, enum, default, " +
    "required): what start_task's context must match.",
  input: EntityPath.pipe(closed("ListWorkflowsInput")),
  output: Schema.Struct({ workflows: Schema.Array(WorkflowEntry) }),
  readOnly: true,
  run: ({ entityId }) => Effect.map(listEntityWorkflows(entityId), (workflows) => reply({ workflows }))
})

const listTasksTool = tool({
  name: "list_tasks",
  title: "List an entity's tasks",
  description: "An entity's tasks (board data): status, and for a running task the component its current step is " +
    "awaiting (e.g. FILE_UPLOAD, TABLE_REVIEW, APPROVAL). Optional filters as GET /v1/entities/:entityId/tasks takes " +
    "them: `status`, `awaiting`; with `limit`, a page, and `nextCursor` to pass as `cursor` for the next one.",
  input: Schema.Struct({
    ...EntityPath.fields,
    status: Schema.optionalKey(Schema.Literals(TASK_STATUSES).annotate({ description: "Only tasks in this status" })),
    awaiting: Schema.optionalKey(AwaitingParam),
    limit: Schema.optionalKey(
      Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: TASK_PAGE_MAX })).annotate({
        description: `At most this many tasks (1..${TASK_PAGE_MAX})`
      })
    ),
    cursor: Schema.optionalKey(Schema.String.annotate({ description: "The nextCursor of an earlier answer" }))
  }).pipe(closed("ListTasksInput")),
  output: Schema.Struct({
    tasks: Schema.Array(TaskSummary),
    nextCursor: Schema.optionalKey(Schema.String.annotate({
      description: "With limit: more tasks may follow; pass it as cursor (with the same filters)"
    }))
  }),
  readOnly: true,
  run: ({ entityId, ...query }) =>
    Effect.map(listTaskPage(entityId, query), ({ nextCursor, tasks }) =>
      reply(nextCursor === undefined ? { tasks } : { tasks, nextCursor }))
})

const AssignedStep = Schema.Struct({
  taskId: Uuid,
  taskTitle: Schema.String,
  entityId: Uuid,
  workflowId: Schema.String,
  stepId: Schema.String,
  stepTitle: Schema.String,
  component: Schema.String.annotate({ description: "The step's displayHint.component, e.g. FILE_UPLOAD, APPROVAL" })
}).annotate({ identifier: "AssignedStep" })

/** Where the next page of assigned steps starts: an entity, and the task of it the last page ended at. */
const AssignedCursor = Schema.StringFromBase64Url.pipe(
  Schema.decodeTo(Schema.fromJsonString(Schema.Tuple([Uuid, Schema.NullOr(Uuid)])))
)

const ASSIGNED_PAGE_MAX = 500

const listAssignedStepsTool = tool({
  name: "list_assigned_steps",
  title: "List my assigned steps",
  description: "The current steps of running tasks that are assigned to you (the calling agent): your work queue. " +
    "Read one with get_task, then complete it (decide_step, submit_file or write_output_files with its signal). " +
    `With \`limit\` (1..${ASSIGNED_PAGE_MAX}), a page, and \`nextCursor\` to pass as \`cursor\` for the next one.`,
  input: Schema.Struct({
    limit: optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: ASSIGNED_PAGE_MAX })).annotate({
      description: `At most this many steps (1..${ASSIGNED_PAGE_MAX})`
    })),
    cursor: optional(Schema.String.annotate({ description: "The nextCursor of an earlier answer" }))
  }).pipe(closed("ListAssignedStepsInput")),
  output: Schema.Struct({
    steps: Schema.Array(AssignedStep),
    nextCursor: Schema.optionalKey(Schema.String.annotate({
      description: "With limit: more steps may follow; pass it as cursor"
    }))
  }),
  readOnly: true,
  // The store is asked only for running tasks whose current step is one assigned to the caller,
  // entity by entity, a page at a time: never every task of the tenant.
  run: ({ cursor, limit }, context) =>
    Effect.gen(function*() {
      const workspace = yield* WorkspaceClient
      const tenant = yield* (yield* Tenant).current
      let start: readonly [string, string | null] | undefined
      if (cursor !== undefined) {
        start = yield* Schema.decodeUnknownEffect(AssignedCursor)(cursor).pipe(
          Effect.mapError(() => new BadRequest({ message: "cursor: must be the nextCursor of an earlier answer" }))
        )
      }
      const assigned = yield* stepsWhere(tenant.id, (step) => step.agentId === context.agent.id)
      if (assigned.length === 0) return reply({ steps: [] })
      const stepOf = new Map(assigned.map((s) => [JSON.stringify([s.workflowId, s.stepId]), s.step]))
      const entities = yield* workspace.listEntities(tenant.id)
      let from = 0
      if (start !== undefined) {
        from = entities.findIndex((e) => e.id === start![0])
        if (from === -1) return yield* Effect.fail(new BadRequest({ message: "cursor: must be the nextCursor of an earlier answer" }))
      }
      const steps: Array<typeof AssignedStep.Type> = []
      let next: readonly [string, string | null] | undefined
      for (let i = from; i < entities.length; i++) {
        const entity = entities[i]!
        const room = limit === undefined ? undefined : limit - steps.length
        if (room === 0) {
          next = [entity.id, null]
          break
        }
        const tasks = yield* workspace.listTasks(tenant.id, entity.id, {
          status: "IN_PROGRESS",
          currentSteps: stepRefs(assigned),
          afterId: i === from && start !== undefined ? start[1] ?? undefined : undefined,
          limit: room === undefined ? undefined : room + 1
        })
        const taken = room === undefined ? tasks : tasks.slice(0, room)
        for (const task of taken) {
          const step = task.currentStep === null ? undefined : stepOf.get(JSON.stringify([task.workflowId, task.currentStep]))
          if (step === undefined || isTerminalStatus(task.status)) continue
          steps.push({
            taskId: task.id,
            taskTitle: task.title,
            entityId: task.entityId,
            workflowId: task.workflowId,
            stepId: step.id,
            stepTitle: step.title,
            component: step.displayHint.component
          })
        }
        if (room !== undefined && tasks.length > room) {
          next = [entity.id, taken[taken.length - 1]!.id]
          break
        }
      }
      return reply(next === undefined ? { steps } : { steps, nextCursor: Schema.encodeSync(AssignedCursor)(next) })
    })
})

// ---------------------------------------------------------------------------------------------
// Reading a task

const Assignment = Schema.Struct({
  stepId: Schema.String,
  agentId: Uuid.annotate({ description: "The agent the current step is assigned to" }),
  assignedToYou: Schema.Boolean
}).annotate({ identifier: "Assignment" })

const getTaskTool = tool({
  name: "get_task",
  title: "Get a task",
  description: "A task's UI state (the same as GET /v1/tasks/:taskId/ui): the task, its current step (title, " +
    "displayHint, args; a FILE_UPLOAD step's args carry a submit_file action naming the source, signalTaskId and " +
    "signalName to send with the file) and every step's status; plus `assignment`: the agent the current step is " +
    "assigned to (null when it is not assigned), and whether that is you.",
  input: TaskPath.pipe(closed("GetTaskInput")),
  output: Schema.Struct({
    ...UiState.fields,
    assignment: Schema.NullOr(Assignment).annotate({ description: "Null when the current step is not assigned" })
  }),
  readOnly: true,
  run: ({ taskId }, context) =>
    Effect.gen(function*() {
      const ui = yield* uiStateOf(taskId)
      const current = yield* currentStepOf(taskId)
      const assignment = Option.isSome(current) && current.value.agentId !== undefined
        ? { stepId: current.value.stepId, agentId: current.value.agentId, assignedToYou: current.value.agentId === context.agent.id }
        : null
      return reply({ ...ui, assignment })
    })
})

const listEventsTool = tool({
  name: "list_events",
  title: "List task events",
  description: "The task's event timeline in the store's order: reasoning, step changes, and every write an agent " +
    "made (type agent.action, source agent:<uuid>, origin gateway). Trust an event's source only by its origin: " +
    "gateway (the gateway's own record), agent (an agent's own event), producer (posted by a client). To read only " +
    `what is new, pass the position of the last event you have as after (and a limit of at most ${EVENT_PAGE_MAX}). ` +
    "An answer holds about 1 MiB of events (SVC_EVENTS_PAGE_BYTES); one that stopped before the end carries " +
    "hasMore: true and nextAfter, the after to read on from.",
  input: Schema.Struct({
    ...TaskPath.fields,
    after: optional(PositionParam.annotate({ description: "Only the events after this position" })),
    limit: optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: EVENT_PAGE_MAX })).annotate({
      description: "At most this many events, the first ones in timeline order"
    }))
  }).pipe(closed("ListEventsInput")),
  output: TimelinePage,
  readOnly: true,
  run: ({ after, limit, taskId }) =>
    Effect.gen(function*() {
      const pageBytes = yield* Effect.orElseSucceed(eventPageBytesSetting, () => DEFAULT_EVENT_PAGE_BYTES)
      return reply(yield* readTimelinePage(taskId, { after, limit }, pageBytes))
    })
})

const { seq: EventSeq, source: _source, ...EventFields } = TaskEventDto.fields

const appendEventTool = tool({
  name: "append_event",
  title: "Append a task event",
  description: "Appends to the task's timeline, e.g. type reasoning.delta with a groupKey to stream your reasoning " +
    "into one panel. The source is you (agent:<your uuid>, origin agent); sourceLabel defaults to your name. Your " +
    "seqs are your own: without seq the next of yours is taken; with seq, re-posting an identical event is a no-op, " +
    "a different one at a taken seq a conflict.",
  input: Schema.Struct({
    taskId: TaskPath.fields.taskId,
    ...EventFields,
    seq: optional(EventSeq)
  }).pipe(closed("AppendEventInput")),
  output: Schema.Struct({ ok: Schema.Literal(true), event: TaskEvent }),
  readOnly: false,
  run: ({ groupKey, payload, seq, sourceLabel, taskId, type }, context) =>
    Effect.gen(function*() {
      const dto = {
        type,
        payload,
        source: agentSource(context.agent),
        sourceLabel: sourceLabel ?? agentLabel(context.agent),
        ...(groupKey !== undefined ? { groupKey } : {})
      }
      const event = seq !== undefined
        ? yield* ownWrite(recordTaskEvent(taskId, { origin: "agent", ...dto, seq }))
        : yield* Effect.flatMap(AgentTimeline, (timeline) => timeline.appendNext(taskId, dto))
      return reply({ ok: true as const, event })
    })
})

const listFilesTool = tool({
  name: "list_files",
  title: "List task files",
  description: "Up to 20 documents of the task, newest first, optionally only those of one source (e.g. receipts, " +
    "or agent_output:<uuid> for files an agent wrote). Read one with read_file.",
  input: Schema.Struct({
    taskId: TaskPath.fields.taskId,
    source: optional(Schema.String.check(Schema.isMinLength(1)).annotate({ description: "Only this source" }))
  }).pipe(closed("ListFilesInput")),
  output: Schema.Struct({ files: Schema.Array(FileDocument) }),
  readOnly: true,
  run: ({ source, taskId }) => Effect.map(listFiles(taskId, source), (files) => reply({ files }))
})

/** Types whose bytes are text (when they are valid UTF-8). */
const TEXTUAL = /^(?:text\/|application\/(?:json|xml|javascript|ecmascript|x-ndjson|ndjson|yaml|x-yaml|csv|sql|graphql|toml)\s*(?:;|$)|application\/[\w.-]+\+(?:json|xml|yaml)\s*(?:;|$))/i
const utf8 = new TextDecoder("utf-8", { fatal: true })

const textOf = (bytes: Uint8Array, contentType: string): string | undefined => {
  if (!TEXTUAL.test(contentType)) return undefined
  try {
    return utf8.decode(bytes)
  } catch {
    return undefined
  }
}

const readFileTool = tool({
  name: "read_file",
  title: "Read a task file",
  description: "The content of one document of the task (documentRef from list_files or a write result): text types " +
    "that are valid UTF-8 come back as text, anything else as a base64 blob resource. Documents over the size cap " +
    "are refused, naming their download URL.",
  input: Schema.Struct({ taskId: TaskPath.fields.taskId, documentRef: UuidInput }).pipe(closed("ReadFileInput")),
  output: Schema.Struct({
    document: Schema.Struct({
      documentRef: Uuid,
      filename: Schema.String,
      contentType: Schema.String,
      sizeBytes: Schema.Int,
      downloadUrl: Schema.String
    }),
    encoding: Schema.Literals(["text", "base64"]).annotate({ description: "How the content block carries the bytes" })
  }),
  readOnly: true,
  run: ({ documentRef, taskId }, context) =>
    // The download's connection is held until this scope closes: read to the end, or refused below.
    Effect.scoped(Effect.gen(function*() {
      const { readMaxBytes } = yield* McpConfig
      yield* (yield* Tenant).requireTask(taskId)
      const { body, document } = yield* openFile(documentRef)
      const link = downloadUrl(taskId, document.id)
      if (document.sizeBytes > readMaxBytes) {
        return yield* Effect.fail(
          new PayloadTooLarge({
            message: `Document ${document.id} is ${document.sizeBytes} bytes; read_file returns at most ${readMaxBytes} ` +
              `bytes (SVC_MCP_READ_MAX_BYTES): download it from ${link}`
          })
        )
      }
      const bytes = Buffer.concat(yield* Stream.runCollect(body))
      const text = textOf(bytes, document.contentType)
      const meta = {
        documentRef: document.id,
        filename: document.filename,
        contentType: document.contentType,
        sizeBytes: document.sizeBytes,
        downloadUrl: link
      }
      return text !== undefined
        ? reply({ document: meta, encoding: "text" as const }, [{ type: "text", text }])
        : reply({ document: meta, encoding: "base64" as const }, [{
          type: "resource",
          resource: { uri: new URL(link, context.origin).href, mimeType: document.contentType, blob: bytes.toString("base64") }
        }])
    }))
})

// ---------------------------------------------------------------------------------------------
// Writing

const startTaskTool = tool({
  name: "start_task",
  title: "Start a task",
  description: "Starts a workflow run for an entity. workflowId must be one list_workflows returns; context is " +
    "checked against its startParams.",
  input: withPath(EntityPath.fields, CreateTaskDto).pipe(closed("StartTaskInput")),
  output: Schema.Struct({ task: CreatedTask }),
  readOnly: false,
  run: ({ entityId, ...dto }, context) =>
    Effect.gen(function*() {
      const task = yield* ownWrite(createTask(entityId, dto))
      yield* record(context, task.id, "start_task", { workflowId: task.workflowId, entityId })
      return reply({ task })
    })
})

const decideStepTool = tool({
  name: "decide_step",
  title: "Approve or reject the current step",
  description: "Decides the task's current step: approved completes it, rejected fails the task; comments become " +
    "the reason. Bound to the step you name (step) or else the one current now, so a retry never decides the next " +
    "step. A step assigned to another agent cannot be decided.",
  input: withPath(TaskPath.fields, TaskActionDto).pipe(closed("DecideStepInput")),
  output: Ok,
  readOnly: false,
  run: ({ taskId, ...dto }, context) =>
    Effect.gen(function*() {
      const current = yield* requireMayComplete(context.agent, taskId, ACTION_SIGNAL[dto.type])
      // Bound to the step whose assignment was just checked, unless the agent named one.
      const step = dto.step ?? Option.getOrUndefined(Option.map(current, (c) => c.stepId))
      yield* ownWrite(decideTask(taskId, { ...dto, ...(step !== undefined ? { step } : {}) }))
      yield* record(context, taskId, "decide_step", {
        decision: dto.type,
        ...(step !== undefined ? { step } : {}),
        ...(dto.comments !== undefined ? { comments: dto.comments } : {})
      })
      return reply({ ok: true as const })
    })
})

const submitFileTool = tool({
  name: "submit_file",
  title: "Submit a file (ingest by reference)",
  description: "The ingest path (POST /v1/tasks/:taskId/files/ingest): the gateway fetches the bytes from fileRef " +
    "(providers: inline_base64 {data}, url {url, headers?}, local {path} where enabled), stores the document and " +
    "then sends signalName to signalTaskId when both are given. To complete a FILE_UPLOAD step, use the source, " +
    "signalTaskId and signalName of the step's submit_file action (get_task). The signal is bound to the step " +
    "current when you call: if the task has moved on by the time the file is stored, nothing is stored (409).",
  input: withPath(TaskPath.fields, IngestFileDto).pipe(closed("SubmitFileInput")),
  output: UploadResult,
  readOnly: false,
  run: ({ taskId, ...dto }, context) =>
    Effect.gen(function*() {
      const bound = yield* checkSignal(context, dto)
      const result = yield* ownWrite(ingestFile(taskId, dto, bound))
      yield* record(context, taskId, "submit_file", {
        documentRef: result.documentRef,
        filename: result.filename,
        source: result.source,
        ...signalOf(dto)
      })
      return reply(result)
    })
})

const ingestDataTool = tool({
  name: "ingest_data",
  title: "Ingest structured records",
  description: "Stores JSON records for the task (data: one record, or events: [{data, sourceRef?}], exactly one of " +
    "the two), all in one transaction; each record's JSON may be at most 256 KB. With signalTaskId and signalName " +
    "one signal per record follows the commit.",
  input: withPath(TaskPath.fields, DataIngestDto).pipe(closed("IngestDataInput")),
  output: Schema.Struct({
    results: Schema.Array(DataIngestResult).annotate({ description: "One per record, in order" })
  }),
  readOnly: false,
  run: ({ taskId, ...dto }, context) =>
    Effect.gen(function*() {
      const bound = yield* checkSignal(context, dto)
      const results = yield* ownWrite(ingestData(taskId, dto, bound))
      yield* record(context, taskId, "ingest_data", {
        records: results.length,
        rowIds: results.slice(0, 20).map((r) => r.id),
        ...(dto.kind !== undefined ? { kind: dto.kind } : {}),
        ...signalOf(dto)
      })
      return reply({ results })
    })
})

export const OUTPUT_SOURCE_PREFIX = "agent_output:"
const MAX_OUTPUT_FILES = 20

const OutputFile = Schema.Struct({
  filename: FileName,
  contentType: optional(MediaType.annotateKey({
    description: "MIME type; guessed from the file name when omitted (text/plain for text without a known extension)"
  })),
  text: optional(Schema.String.annotate({ description: "The content as text (stored as UTF-8)" })),
  dataBase64: optional(Schema.String.annotate({ contentEncoding: "base64", description: "The content as base64" }))
}).pipe(
  Schema.check(Schema.makeFilter((f) =>
    (f.text === undefined) !== (f.dataBase64 === undefined) ||
    { path: ["text"], issue: "exactly one of text / dataBase64 must be set" }, {
    toJsonSchema: () => ({ allOf: [{ oneOf: [{ required: ["text"] }, { required: ["dataBase64"] }] }] })
  })),
  closed("OutputFile")
)

const OutputFileResult = Schema.Struct({
  document_ref: Uuid,
  filename: Schema.String,
  content_type: Schema.String,
  size_bytes: Schema.Int,
  source: Schema.String
}).annotate({ identifier: "OutputFileResult" })

const writeOutputFilesTool = tool({
  name: "write_output_files",
  title: "Write output files",
  description: "Stores files you produced as submitted documents of the task, with source agent_output:<your uuid> " +
    "(downloadable through /v1 like any task file). Each file is text or base64. With signalTaskId and signalName, " +
    "the signal follows the last file (e.g. file_submitted to complete a FILE_UPLOAD step), bound to the step current " +
    "when you call (409 on the last file if the task has moved on meanwhile).",
  input: Schema.Struct({
    taskId: TaskPath.fields.taskId,
    files: Schema.Array(OutputFile).check(Schema.isMinLength(1), Schema.isMaxLength(MAX_OUTPUT_FILES)),
    signalTaskId: IngestFileDto.fields.signalTaskId,
    signalName: IngestFileDto.fields.signalName
  }).pipe(
    Schema.check(Schema.makeFilter(signalPair, { toJsonSchema: () => signalPairSchema })),
    closed("WriteOutputFilesInput")
  ),
  output: Schema.Struct({ output_files: Schema.Array(OutputFileResult) }),
  readOnly: false,
  run: ({ files, taskId, ...signal }, context) =>
    Effect.gen(function*() {
      const bound = yield* checkSignal(context, signal)
      // Every file decoded before anything is stored.
      const decoded = yield* Effect.forEach(files, (f, i) =>
        f.dataBase64 !== undefined
          ? Effect.map(decodeBase64(`files[${i}].dataBase64`, f.dataBase64), (bytes) => ({ file: f, bytes }))
          : Effect.succeed({ file: f, bytes: new Uint8Array(Buffer.from(f.text ?? "", "utf8")) }))
      const source = `${OUTPUT_SOURCE_PREFIX}${context.agent.id}`
      const stored = yield* Effect.forEach(decoded, ({ bytes, file }, i) =>
        ownWrite(persistFile(taskId, {
          source,
          fileName: file.filename,
          ...(file.contentType !== undefined ? { contentType: file.contentType } : {}),
          ...(i === decoded.length - 1 ? signalOf(signal) : {})
        }, {
          bytes,
          // Text says what it is when neither the caller nor the file name does.
          ...(file.text !== undefined ? { contentType: "text/plain; charset=utf-8" } : {})
        }, i === decoded.length - 1 ? bound : {})))
      const output_files = stored.map((r) => ({
        document_ref: r.documentRef,
        filename: r.filename,
        content_type: r.contentType,
        size_bytes: r.sizeBytes,
        source: r.source
      }))
      yield* record(context, taskId, "write_output_files", {
        files: output_files.map((f) => ({ documentRef: f.document_ref, filename: f.filename })),
        ...signalOf(signal)
      })
      return reply({ output_files })
    })
})

/** Every tool, in the order `tools/list` gives them. */
export const TOOLS: ReadonlyArray<AnyTool> = [
  listAssignedStepsTool,
  inboxTool,
  listEntitiesTool,
  listWorkflowsTool,
  listTasksTool,
  startTaskTool,
  getTaskTool,
  listEventsTool,
  appendEventTool,
  listFilesTool,
  readFileTool,
  submitFileTool,
  ingestDataTool,
  writeOutputFilesTool,
  decideStepTool
]
