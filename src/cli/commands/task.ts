/** task ui / snapshots / approve / reject / row-action. */
import * as Flag from "effect/cli/Flag"
import { claim, release } from "./inbox.js"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { TaskActionDto, TaskRowActionDto } from "../../api/dtos.js"
import type { UiState } from "../../api/resources.js"
import { terminalSafe } from "../events.js"
import {
  checkPayload,
  choiceArg,
  type Ctx,
  fields,
  gatewayCommand,
  group,
  line,
  parseValue,
  rowIdArg,
  table,
  taskIdArg,
  truncate
} from "../common.js"

const MARK: Record<string, string> = { COMPLETED: "[x]", IN_PROGRESS: "[>]", PENDING: "[ ]", SKIPPED: "[-]" }

/** A row of a table step's `args.rows`. */
interface TableRowView {
  readonly id: string
  readonly status: string
  readonly fields: Record<string, unknown>
  readonly editable: ReadonlyArray<string>
}

/** A table step's rows: id, status, every field (edits allowed now marked *), then how to act on them. */
const renderRows = (taskId: string, rows: ReadonlyArray<TableRowView>) =>
  Effect.gen(function*() {
    const names = [...new Set(rows.flatMap((r) => Object.keys(r.fields ?? {})))]
    yield* line()
    yield* line(`Rows (${rows.length}; * = editable now)`)
    yield* table([
      ["ROW", (r: TableRowView) => r.id],
      ["STATUS", (r: TableRowView) => r.status],
      ...names.map((name) =>
        [name.toUpperCase(), (r: TableRowView) => {
          const value = r.fields?.[name]
          const text = value === undefined ? "" : value === null ? "null" : typeof value === "string" ? value : JSON.stringify(value)
          return `${truncate(text, 32)}${r.editable?.includes(name) ? "*" : ""}`
        }] as const
      )
    ], rows)
    if (rows.length > 0) {
      yield* line(`hint: svc task row-action ${taskId} edit_cell <ROW> --field <name> --value <v>  |  svc task row-action ${taskId} reject_row <ROW>`)
    }
  })

const renderUi = (ui: UiState) =>
  Effect.gen(function*() {
    yield* fields([
      ["Task", ui.task.id],
      ["Title", ui.task.title],
      ["Status", ui.task.status],
      ["Current step", ui.step === null ? "(none)" : `${ui.step.id}: ${ui.step.title} (${ui.step.displayHint.component})`]
    ])
    if (ui.step !== null) {
      const { actions, rows, ...args } = ui.step.args as Record<string, unknown>
      if (Object.keys(args).length > 0) yield* line(`Args          ${truncate(JSON.stringify(args), 200)}`)
      if (Object.keys(ui.step.displayHint.config).length > 0) {
        yield* line(`Config        ${truncate(JSON.stringify(ui.step.displayHint.config), 200)}`)
      }
      for (const a of Array.isArray(actions) ? actions : []) {
        const act = a as Record<string, unknown>
        yield* line(`Action        ${act.type} → ${act.method ?? ""} ${act.path ?? ""} (source ${act.source ?? "-"}, signal ${act.signalName ?? "-"})`)
        if (act.type === "submit_file") {
          yield* line(`              hint: svc files upload ${ui.task.id} <path> --submit`)
        }
      }
      if (ui.step.displayHint.component === "APPROVAL" || ui.step.displayHint.component === "TABLE_REVIEW") {
        yield* line(`              hint: svc task approve ${ui.task.id}  |  svc task reject ${ui.task.id} --comments "..."`)
      }
      if (Array.isArray(rows)) yield* renderRows(ui.task.id, rows as ReadonlyArray<TableRowView>)
    }
    yield* line()
    yield* table([
      ["", (s) => MARK[s.status] ?? "[?]"],
      ["STEP", (s) => s.id],
      ["TITLE", (s) => s.title ?? ""],
      ["STATUS", (s) => s.status]
    ], ui.steps)
  })

const ui = gatewayCommand("ui", "Show a task's combined UI state: the task, its current step and every step", {
  taskId: taskIdArg
}, ({ taskId }, ctx) => Effect.flatMap(ctx.gateway.tasks.getUi({ path: { taskId } }), (s) => ctx.output(s, renderUi)))

const snapshots = gatewayCommand("snapshots", "Show what was shown and decided at each completed step", {
  taskId: taskIdArg
}, ({ taskId }, ctx) =>
  Effect.flatMap(ctx.gateway.tasks.getSnapshots({ path: { taskId } }), (snaps) =>
    ctx.output(snaps, (map) => {
      const entries = Object.entries(map)
      if (entries.length === 0) return line("(no snapshots)")
      return line(entries.map(([step, snap]) => `${step}\n${indent(JSON.stringify(snap, null, 2))}`).join("\n"))
    })))

const indent = (s: string) => s.split("\n").map((l) => `  ${l}`).join("\n")

const comments = Flag.String("comments").pipe(
  Flag.withAlias("m"),
  Flag.optional,
  Flag.withDescription("Free text, recorded in the audit log (sent as the reason)")
)

const decide = (type: "approved" | "rejected", verb: string) =>
  (args: { readonly taskId: string; readonly comments: Option.Option<string> }, ctx: Ctx) =>
    Effect.gen(function*() {
      const payload = Option.match(args.comments, {
        onNone: () => ({ type }),
        onSome: (c) => ({ type, comments: c })
      })
      const dto = yield* checkPayload(TaskActionDto, payload, `task ${verb}`)
      // The decision is bound to the step read here, so the step the output names is the one decided
      // (a task that moved on in between answers 409 naming where it is).
      const [{ step, task }, me] = yield* Effect.all([
        ctx.gateway.tasks.getUi({ path: { taskId: args.taskId } }),
        ctx.gateway.inbox.getMe()
      ], { concurrency: 2 })
      const bound = step === null ? dto : { ...dto, step: step.id }
      const result = yield* ctx.gateway.tasks.action({ path: { taskId: args.taskId }, payload: bound })
      const named = terminalSafe(
        `${step === null ? "" : `: step "${step.title}" (${step.id}) of "${task.title}"`} (tenant ${me.tenant.slug})`
      )
      yield* ctx.output(result, () => line(`${verb === "approve" ? "Approved" : "Rejected"} the current step of task ${args.taskId}${named}`))
    })

const approve = gatewayCommand("approve", "Approve the task's current step", { taskId: taskIdArg, comments }, decide("approved", "approve"))
const reject = gatewayCommand("reject", "Reject the task's current step", { taskId: taskIdArg, comments }, decide("rejected", "reject"))

const rowAction = gatewayCommand(
  "row-action",
  "Act on a row of the task's table step: reject_row, resolve_flag (a flagged row marked resolved), or edit_cell with --field and --value",
  {
    taskId: taskIdArg,
    action: choiceArg("action", ["reject_row", "resolve_flag", "edit_cell"]),
    rowId: rowIdArg,
    ledger: Flag.String("ledger").pipe(Flag.withDefault("expenses"), Flag.withDescription("Subledger (only expenses is accepted)")),
    field: Flag.String("field").pipe(Flag.optional, Flag.withDescription("Column key (edit_cell)")),
    value: Flag.String("value").pipe(
      Flag.optional,
      Flag.withDescription("New value (edit_cell): JSON when it parses (190.5, null, true), else text")
    )
  },
  (args, ctx) =>
    Effect.gen(function*() {
      const payload: Record<string, unknown> = { ledger: args.ledger, action: args.action, rowId: args.rowId }
      if (Option.isSome(args.field)) payload.field = args.field.value
      if (Option.isSome(args.value)) payload.value = yield* parseValue("value", args.value.value)
      const dto = yield* checkPayload(TaskRowActionDto, payload, "task row-action")
      const result = yield* ctx.gateway.tasks.rowAction({ path: { taskId: args.taskId }, payload: dto })
      yield* ctx.output(result, () => line(`Sent ${args.action} on ${args.ledger} row ${args.rowId} to task ${args.taskId}`))
    })
)

export const task = group("task", "Drive one task: UI state, snapshots, approve/reject, row actions, claims", [
  ui,
  snapshots,
  approve,
  reject,
  rowAction,
  claim,
  release
])
