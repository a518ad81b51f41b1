/** events list / follow. */
import * as Flag from "effect/cli/Flag"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { EVENT_PAGE_MAX, POSITION_PATTERN } from "../../api/eventPaging.js"
import type { TaskEvent } from "../../api/resources.js"
import { isTerminalStatus } from "../../api/taskListing.js"
import { booleanFlag, floatFlag, gatewayCommand, group, integerFlag, line, table, taskIdArg, usage, write } from "../common.js"
import { indexOf, makeTimelineRenderer, payloadCell, terminalSafe } from "../events.js"

/** The page's query parameters, without the unset ones. */
const pageParams = (after: string | undefined, limit: number | undefined) => ({
  ...(after !== undefined ? { after } : {}),
  ...(limit !== undefined ? { limit } : {})
})

/** An event's position, as `--after` takes it (the POSITION column, or a `(more: ...)` line). */
const positionFlag = (description: string) =>
  Flag.String("after").pipe(
    Flag.filterMap(
      (s) => POSITION_PATTERN.test(s) ? Option.some(s) : Option.none(),
      (s) => `--after '${s.slice(0, 64)}' is not an event's position (digits, or digits-digits)`
    ),
    Flag.withDescription(description),
    Flag.optional
  )

const list = gatewayCommand("list", "List a task's events in timeline order", {
  taskId: taskIdArg,
  after: positionFlag("Only the events after this position"),
  limit: integerFlag("limit").pipe(Flag.optional, Flag.withDescription(`At most this many events (1..${EVENT_PAGE_MAX})`))
}, ({ after, limit, taskId }, ctx) =>
  Effect.flatMap(ctx.gateway.events.listEvents({ path: { taskId }, urlParams: pageParams(Option.getOrUndefined(after), Option.getOrUndefined(limit)) }), (result) =>
    ctx.output(result, ({ events, nextAfter }) => {
      const index = indexOf(events)
      return table([
        ["POSITION", (e) => e.position],
        ["SEQ", (e) => String(e.seq)],
        ["CREATED", (e) => e.createdAt],
        ["TYPE", (e) => terminalSafe(e.type)],
        ["SOURCE", (e) => terminalSafe(e.sourceLabel ?? e.source)],
        ["GROUP", (e) => e.groupKey === undefined ? undefined : terminalSafe(e.groupKey)],
        // The gateway's own record as a sentence, other events' payload as JSON.
        ["PAYLOAD", (e) => payloadCell(e, index)]
      ], events).pipe(
        // The answer stopped at its byte budget or the limit: say how to read on.
        Effect.andThen(nextAfter === undefined ? Effect.void : line(`(more: svc events list ${taskId} --after ${nextAfter})`))
      )
    })))

const follow = gatewayCommand(
  "follow",
  "Poll a task's events and print new ones in timeline order; reasoning.delta events of one groupKey grow one line",
  {
    taskId: taskIdArg,
    interval: floatFlag("interval").pipe(Flag.withDefault(1), Flag.withDescription("Seconds between polls (default 1)")),
    timeout: floatFlag("timeout").pipe(Flag.optional, Flag.withDescription("Stop after this many seconds")),
    untilDone: booleanFlag("until-done").pipe(
      Flag.withDescription("Stop once the task is COMPLETED or FAILED (and its last events are printed)")
    ),
    after: positionFlag("Start after this position")
  },
  ({ after, interval, taskId, timeout, untilDone }, ctx) =>
    Effect.gen(function*() {
      if (interval <= 0) return yield* usage("--interval must be a positive number of seconds")
      if (Option.isSome(timeout) && timeout.value <= 0) return yield* usage("--timeout must be a positive number of seconds")
      const renderer = makeTimelineRenderer()
      // Only what is new: each poll asks for the events after the last position printed, page by page.
      let cursor = Option.getOrUndefined(after)
      const readNew = Effect.gen(function*() {
        const fresh: Array<TaskEvent> = []
        for (;;) {
          const { events, nextAfter } = yield* ctx.gateway.events.listEvents({
            path: { taskId },
            urlParams: pageParams(cursor, EVENT_PAGE_MAX)
          })
          fresh.push(...events)
          if (events.length > 0) cursor = events[events.length - 1]!.position
          // The answer stops at its byte budget or the limit and says where to read on.
          if (nextAfter === undefined) return fresh
          cursor = nextAfter
        }
      })
      const poll = Effect.gen(function*() {
        // Read the status first: events written before a terminal status are then all in the list.
        const done = untilDone
          ? isTerminalStatus((yield* ctx.gateway.tasks.getUi({ path: { taskId } })).task.status)
          : false
        const visible = yield* readNew
        if (ctx.json) {
          const fresh = renderer.fresh(visible)
          renderer.markSeen(fresh)
          yield* write(fresh.map((e) => `${JSON.stringify(e)}\n`).join(""))
        } else {
          yield* write(renderer.push(visible))
        }
        return done
      })
      const loop = Effect.gen(function*() {
        while (!(yield* poll)) yield* Effect.sleep(Duration.seconds(interval))
      })
      const bounded = Option.match(timeout, {
        onNone: () => loop,
        onSome: (s) => Effect.asVoid(Effect.timeoutOption(loop, Duration.seconds(s)))
      })
      yield* bounded.pipe(Effect.ensuring(Effect.suspend(() => write(renderer.close()))))
    })
)

export const events = group("events", "A task's event timeline", [list, follow])


