/**
 * Opt-in filtering and paging of an entity's task list: `status`, `awaiting`,
 * `limit` and `cursor` as query parameters. Without them the answer is the spec's TaskSummary[]
 * of every task, unchanged. The body stays that array when paging too (a field cannot be added
 * to an array), so the cursor of the next page travels in a response header, NEXT_CURSOR_HEADER,
 * sent only when `limit` was given and more tasks may follow (the events list pages with body
 * fields, `hasMore`/`nextAfter`, because its body is an object).
 */
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { isUuid } from "./ids.js"

/** The response header carrying the `cursor` of the next page. */
export const NEXT_CURSOR_HEADER = "x-next-cursor"

/** The most tasks one page may ask for. */
export const TASK_PAGE_MAX = 500

/** The task statuses (spec §3); a filter on any other is a 400. */
export const TASK_STATUSES = ["IN_PROGRESS", "COMPLETED", "FAILED"] as const

/** The statuses of a task that is done: it has no current step and awaits nothing. */
export const TERMINAL_STATUSES: ReadonlyArray<string> = ["COMPLETED", "FAILED"]

/** Whether a task in this status is done (one of TERMINAL_STATUSES). */
export const isTerminalStatus = (status: string): boolean => TERMINAL_STATUSES.includes(status)

/**
 * A cursor names the last task the previous page looked at (base64url of its id), so the next
 * page starts after it in the list's order; it stays valid while tasks are added. Opaque to
 * clients: only what NEXT_CURSOR_HEADER carried is meant to come back.
 */
export const encodeTaskCursor = (taskId: string): string =>
  // btoa, not Buffer: the contract loads in browsers too. The text is ASCII (a UUID).
  btoa(`t:${taskId}`).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")

const CURSOR_RE = /^[A-Za-z0-9_-]{1,128}$/u

/**
 * The task a cursor names, undefined for anything this gateway did not send. The contract
 * checks only its alphabet (so that the typed client sends the header's value as it came);
 * the handler decodes it with this.
 */
export const taskIdOfCursor = (cursor: string): string | undefined => {
  if (!CURSOR_RE.test(cursor)) return undefined
  let text: string
  try {
    text = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"))
  } catch {
    return undefined
  }
  const id = text.slice(2)
  // Only the one spelling this gateway sends (no padding, no stray bits) names the task.
  return text.startsWith("t:") && isUuid(id) && encodeTaskCursor(id) === cursor ? id : undefined
}

export const CURSOR_MESSAGE = `cursor: must be the ${NEXT_CURSOR_HEADER} header of an earlier answer`

const TaskCursor = Schema.String.check(
  Schema.isPattern(CURSOR_RE, { message: CURSOR_MESSAGE.slice("cursor: ".length) })
).annotate({ description: `Where the page starts: the ${NEXT_CURSOR_HEADER} header of the previous answer (opaque)` })

/** A display component, as `awaiting` names it. */
export const AwaitingParam = Schema.String.check(
  Schema.isPattern(/^[A-Za-z0-9_.-]{1,128}$/u, { message: "must be a component name such as FILE_UPLOAD (letters, digits, _ . -)" })
).annotate({ description: "Only running tasks whose current step awaits this component (e.g. TABLE_REVIEW)" })

const LIMIT_MESSAGE = `must be an integer from 1 to ${TASK_PAGE_MAX}`

export const TaskListParams = Schema.Struct({
  status: Schema.optionalKey(
    // No message of its own: the formatter's `Expected "IN_PROGRESS" | ..., actual "X"` (Effect 3
    // never showed one on a union of literals).
    Schema.Literals(TASK_STATUSES).annotate({ description: "Only tasks in this status" })
  ),
  awaiting: Schema.optionalKey(AwaitingParam),
  limit: Schema.optionalKey(
    Schema.String.check(Schema.isPattern(/^\d{1,4}$/u, { message: LIMIT_MESSAGE })).pipe(
      Schema.decodeTo(
        Schema.Finite.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: TASK_PAGE_MAX }, { message: LIMIT_MESSAGE })),
        SchemaTransformation.numberFromString
      )
    ).pipe(Schema.annotateEncoded({
      description: `At most this many tasks (1..${TASK_PAGE_MAX}); the answer then carries ${NEXT_CURSOR_HEADER} ` +
        "when more may follow"
    }))
  ),
  cursor: Schema.optionalKey(TaskCursor)
})

export type TaskListQuery = typeof TaskListParams.Type
