/** inbox: what waits, and for whom, across entities; task claim / release. */
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { INBOX_PAGE_MAX } from "../../api/inbox.js"
import { booleanFlag, gatewayCommand, integerFlag, line, note, table, taskIdArg, usage } from "../common.js"

const text = (name: string, description: string) => Flag.String(name).pipe(Flag.optional, Flag.withDescription(description))

export const inbox = gatewayCommand("inbox", "What waits, and for whom: every waiting step of the tenant's running tasks, oldest first", {
  assignee: text("assignee", "me (the actor the edge names, and their groups), or an actor or group:<name>"),
  awaiting: text("awaiting", "Only steps of this component (e.g. TABLE_REVIEW)"),
  entity: text("entity", "Only this entity's tasks (UUID)"),
  workflow: text("workflow", "Only this workflow's tasks"),
  overdue: booleanFlag("overdue").pipe(Flag.withDescription("Only steps past their due time")),
  limit: integerFlag("limit").pipe(Flag.optional, Flag.withDescription(`Items per page (1..${INBOX_PAGE_MAX}, default 50)`)),
  cursor: text("cursor", "The page after an earlier answer (same filters)")
}, (args, ctx) =>
  Effect.gen(function*() {
    const n = Option.getOrUndefined(args.limit)
    if (n !== undefined && (n < 1 || n > INBOX_PAGE_MAX)) return yield* usage(`--limit: must be an integer from 1 to ${INBOX_PAGE_MAX}`)
    const opt = <K extends string>(key: K, o: Option.Option<string>) => (Option.isSome(o) ? { [key]: o.value } as Record<K, string> : {})
    const urlParams = {
      ...opt("assignee", args.assignee),
      ...opt("awaiting", args.awaiting),
      ...opt("entityId", args.entity),
      ...opt("workflowId", args.workflow),
      ...(args.overdue ? { overdue: "true" as const } : {}),
      ...(n !== undefined ? { limit: n } : {}),
      ...opt("cursor", args.cursor)
    }
    const page = yield* ctx.gateway.inbox.getInbox({ urlParams })
    yield* ctx.output(page, (p) =>
      p.items.length === 0
        ? line("Nothing waits here.")
        : table([
          ["TASK", (i) => i.task.id],
          ["ENTITY", (i) => i.entity.name],
          ["STEP", (i) => `${i.step.title} (${i.step.component})`],
          ["WAITS FOR", (i) => (i.assignees.length === 0 ? "anyone" : i.assignees.join(", "))],
          ["SINCE", (i) => i.waitingSince],
          ["DUE", (i) => (i.dueAt === undefined ? "" : `${i.dueAt}${i.overdue ? " OVERDUE" : ""}`)],
          ["CLAIM", (i) => (i.claim === undefined ? "" : i.claim.by)],
          ["YOU", (i) => (i.mayAct ? "may act" : "")]
        ], p.items))
    if (page.nextCursor !== undefined) {
      const again = process.argv.slice(2).filter((a, i, all) => a !== "--cursor" && all[i - 1] !== "--cursor" && !a.startsWith("--cursor="))
      yield* note(`(more: svc ${again.join(" ")} --cursor ${page.nextCursor})`)
    }
  }))

export const claim = gatewayCommand("claim", "Claim the task's current step for yourself (409 names whoever holds it)", {
  taskId: taskIdArg,
  override: booleanFlag("override").pipe(Flag.withDescription("Take over a step assigned to an agent (recorded in the timeline)"))
}, (args, ctx) =>
  Effect.flatMap(
    ctx.gateway.inbox.claim({ path: { taskId: args.taskId }, payload: args.override ? { override: true } : {} }),
    (c) => ctx.output(c, () => line(`${c.by} holds step ${c.stepId} of task ${args.taskId}${c.override ? " (taken over from its agent)" : ""}`))
  ))

export const release = gatewayCommand("release", "Release the claim on the task's current step", { taskId: taskIdArg }, (args, ctx) =>
  Effect.flatMap(ctx.gateway.inbox.releaseClaim({ path: { taskId: args.taskId } }), () =>
    ctx.output({ ok: true }, () => line(`Released the claim on task ${args.taskId}`))))
