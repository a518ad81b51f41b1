/** health; entities list; tasks list / workflows / start. */
import * as Argument from "effect/cli/Argument"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { AwaitingParam, TASK_PAGE_MAX, TASK_STATUSES, taskIdOfCursor } from "../../api/taskListing.js"
import { nextTaskCursor } from "../../client/taskList.js"
import {
  booleanFlag,
  choiceFlag,
  entityIdArg,
  fields,
  gatewayCommand,
  group,
  integerFlag,
  line,
  note,
  parseKeyValues,
  table,
  usage
} from "../common.js"
import { buildContext, inexactParam, summarizeParams, unknownWorkflowMessage } from "../startParams.js"

export const health = gatewayCommand("health", "Check that the gateway is up", {}, (_, ctx) =>
  Effect.flatMap(ctx.gateway.health.health(), (h) => ctx.output(h, () => line(`${h.status} (${ctx.baseUrl})`))))

const entitiesList = gatewayCommand("list", "List the tenant's entities", {}, (_, ctx) =>
  Effect.flatMap(ctx.gateway.entities.listEntities(), (entities) =>
    ctx.output(entities, (rows) =>
      table([
        ["ID", (e) => e.id],
        ["SLUG", (e) => e.slug],
        ["NAME", (e) => e.name]
      ], rows))))

export const entities = group("entities", "The tenant's entities", [entitiesList])

const tasksList = gatewayCommand("list", "List an entity's tasks (board data)", {
  entityId: entityIdArg,
  status: choiceFlag("status", TASK_STATUSES).pipe(Flag.optional, Flag.withDescription("Only tasks in this status")),
  awaiting: Flag.String("awaiting").pipe(
    Flag.optional,
    Flag.withDescription("Only running tasks whose current step awaits this component (e.g. TABLE_REVIEW)")
  ),
  limit: integerFlag("limit").pipe(Flag.optional, Flag.withDescription(`At most this many tasks (1..${TASK_PAGE_MAX}); the command for the next page is printed on stderr`)),
  cursor: Flag.String("cursor").pipe(Flag.optional, Flag.withDescription("The page after an earlier --limit answer"))
}, ({ awaiting, cursor, entityId, limit, status }, ctx) =>
  Effect.gen(function*() {
    const n = Option.getOrUndefined(limit)
    if (n !== undefined && (n < 1 || n > TASK_PAGE_MAX)) return yield* usage(`--limit: must be an integer from 1 to ${TASK_PAGE_MAX}`)
    // The typed client refuses these before sending, reported as a bad response body: say which flag.
    if (Option.isSome(awaiting) && !Schema.is(AwaitingParam)(awaiting.value)) {
      return yield* usage("--awaiting: must be a component name such as FILE_UPLOAD (letters, digits, _ . -)")
    }
    if (Option.isSome(cursor) && taskIdOfCursor(cursor.value) === undefined) {
      return yield* usage("--cursor: must be the --cursor value an earlier --limit listing printed")
    }
    const urlParams = {
      ...Option.match(status, { onNone: () => ({}), onSome: (status) => ({ status }) }),
      ...Option.match(awaiting, { onNone: () => ({}), onSome: (awaiting) => ({ awaiting }) }),
      ...(n !== undefined ? { limit: n } : {}),
      ...Option.match(cursor, { onNone: () => ({}), onSome: (cursor) => ({ cursor }) })
    }
    const [tasks, response] = yield* ctx.gateway.entities.listTasks({ path: { entityId }, urlParams, withResponse: true })
    yield* ctx.output(tasks, (rows) =>
      table([
        ["ID", (t) => t.id],
        ["STATUS", (t) => t.status],
        ["AWAITING", (t) => t.awaiting],
        ["WORKFLOW", (t) => t.workflowId],
        ["CREATED", (t) => t.createdAt],
        ["TITLE", (t) => t.title]
      ], rows))
    // More pages: say how to read the next (on stderr, so that --json output stays the array).
    const next = nextTaskCursor(response)
    if (next !== undefined) {
      const again = process.argv.slice(2).filter((a, i, all) => a !== "--cursor" && all[i - 1] !== "--cursor" && !a.startsWith("--cursor="))
      yield* note(`(more: svc ${again.join(" ")} --cursor ${next})`)
    }
  }))

const tasksWorkflows = gatewayCommand(
  "workflows",
  "List the workflows an entity can start, with their start parameters (* = required)",
  { entityId: entityIdArg },
  ({ entityId }, ctx) =>
    Effect.flatMap(ctx.gateway.entities.listWorkflows({ path: { entityId } }), (workflows) =>
      ctx.output(workflows, (rows) =>
        table([
          ["ID", (w) => w.id],
          ["NAME", (w) => w.name],
          ["PARAMS", (w) => summarizeParams(w.startParams)]
        ], rows)))
)

const tasksStart = gatewayCommand(
  "start",
  "Start a workflow run for an entity; --param key=value (JSON when it parses, else text) fills its start parameters",
  {
    entityId: entityIdArg,
    workflowId: Argument.String("workflowId").pipe(Argument.withDescription("A workflow id from `svc tasks workflows`")),
    param: Flag.String("param").pipe(
      Flag.withAlias("p"),
      Flag.atLeast(0),
      Flag.withDescription("A start parameter, key=value; repeat for more")
    ),
    noCheck: booleanFlag("no-check").pipe(
      Flag.withDescription("Send the parameters without checking them against the workflow's startParams")
    )
  },
  ({ entityId, noCheck, param, workflowId }, ctx) =>
    Effect.gen(function*() {
      const given = yield* parseKeyValues("--param", param)
      // Sent unchecked (--no-check), a number the JSON reading changed would go as that other number.
      const inexact = noCheck ? inexactParam(given) : undefined
      if (inexact !== undefined) return yield* usage(inexact)
      let context: Record<string, unknown> = Object.fromEntries(given.map((p) => [p.key, p.value]))
      if (!noCheck) {
        const workflows = yield* ctx.gateway.entities.listWorkflows({ path: { entityId } })
        const workflow = workflows.find((w) => w.id === workflowId)
        if (workflow === undefined) return yield* usage(unknownWorkflowMessage(workflowId, entityId, workflows))
        if (workflow.startParams === undefined) {
          yield* note(`warning: workflow "${workflowId}" publishes no startParams; --param values are sent unchecked`)
        }
        const built = buildContext(workflow, given)
        if (!built.ok) return yield* usage(built.message)
        context = built.context
      }
      const task = yield* ctx.gateway.entities.createTask({ path: { entityId }, payload: { workflowId, context } })
      yield* ctx.output(task, (t) =>
        fields([
          ["Started task", t.id],
          ["Title", t.title],
          ["Status", t.status],
          ["Workflow", t.workflowId]
        ]))
    })
)

export const tasks = group("tasks", "An entity's tasks: list them, see what can start, start one", [tasksList, tasksWorkflows, tasksStart])
