/**
 * Paging of a task's timeline: `after` (a position, the store's order of the merged timeline)
 * and `limit` as query parameters, shared by the gateway's GET /v1/tasks/:taskId/events, its
 * event stream and the WorkspaceApi. Without them the answer starts at the first event.
 */
import * as Schema from "effect/Schema"
import { decimalInt } from "./decimalInt.js"
import { TaskEvent } from "./resources.js"
import { utf8Length } from "./textLength.js"

/** The most events one page may ask for. */
export const EVENT_PAGE_MAX = 1000

/**
 * A position as the store writes it: `<n>`, or `<tx>-<n>` where the store orders by the writing
 * transaction first (PostgreSQL: positions are taken at insert but seen at commit).
 */
export const POSITION_PATTERN = /^(?:\d{1,19}-)?\d{1,16}$/u

/**
 * A position as a query or header value: the events after it (in the store's order) are wanted.
 * Its number is a safe integer (the store's are): a larger one would be read as another.
 */
export const PositionParam = Schema.String.check(
  Schema.isPattern(POSITION_PATTERN, { message: "must be an event's position (digits, or digits-digits)" }),
  // Told only of a value of the pattern: one message per value.
  Schema.makeFilter((s: string) =>
    !POSITION_PATTERN.test(s) || Number(s.slice(s.indexOf("-") + 1)) <= Number.MAX_SAFE_INTEGER ||
    `must be an event's position: its number is at most ${Number.MAX_SAFE_INTEGER}`, { toJsonSchema: () => ({}) })
).pipe(Schema.annotateEncoded({ description: "Only the events after this position (the `position` of the last event read)" }))

/** A position's parts: the writing transaction (0 where the store does not order by it) and the number. */
export interface PositionParts {
  readonly tx: string
  readonly n: number
}

export const positionParts = (position: string): PositionParts => {
  const dash = position.indexOf("-")
  return dash < 0
    ? { tx: "0", n: Number(position) }
    : { tx: position.slice(0, dash).replace(/^0+(?=\d)/, ""), n: Number(position.slice(dash + 1)) }
}

export const positionOf = (tx: string | number | bigint, n: string | number | bigint): string =>
  String(tx) === "0" ? String(n) : `${String(tx)}-${String(n)}`

/** `limit`: at most this many events, 1..max. */
const pageLimit = (max: number) =>
  Schema.optionalKey(
    decimalInt(
      `an integer from 1 to ${max}`,
      Schema.isBetween({ minimum: 1, maximum: max }, { message: `must be an integer from 1 to ${max}` })
    ).pipe(Schema.annotateEncoded({ description: `At most this many events (the first ones, in timeline order), 1..${max}` }))
  )

export const EventPageParams = Schema.Struct({
  after: Schema.optionalKey(PositionParam),
  limit: pageLimit(EVENT_PAGE_MAX)
})

/**
 * The bytes a timeline answer holds at most: GET /events and each page of the
 * event stream stop after the event that takes them to this many (SVC_EVENTS_PAGE_BYTES), so a
 * single larger event still goes out, alone.
 */
export const DEFAULT_EVENT_PAGE_BYTES = 1024 * 1024

/** The most events one answer holds when the client sets no `limit` (the byte budget binds first by default). */
export const ANSWER_EVENTS_MAX = 10_000

/** What an event costs in an answer besides its variable fields: keys, seq, position, origin, createdAt, quotes. */
export const EVENT_SIZE_OVERHEAD = 160

/**
 * An event's size as answers count it: UTF-8 bytes of its variable fields (the payload as the
 * store keeps it, its JSON) plus the overhead. The embedded store counts the same bytes in SQL
 * (octet_length); the store alone cuts a page and says whether more follows, so a page is
 * counted once, one way.
 */
export const eventSize = (e: {
  readonly taskId: string
  readonly type: string
  readonly source: string
  readonly sourceLabel?: string | undefined
  readonly groupKey?: string | undefined
  readonly payload: unknown
}) =>
  EVENT_SIZE_OVERHEAD + utf8Length(e.taskId) + utf8Length(e.type) + utf8Length(e.source) +
  utf8Length(e.sourceLabel ?? "") + utf8Length(e.groupKey ?? "") + utf8Length(JSON.stringify(e.payload))

/**
 * How many of the leading events (of these sizes) one answer of `maxBytes` takes: events are
 * added while the total is under `maxBytes`, so the last one may take it past, and the first
 * one is always taken (an event larger than the budget goes out alone, never stuck).
 */
export const eventsWithinBytes = (sizes: ReadonlyArray<number>, maxBytes: number): number => {
  let total = 0
  for (let i = 0; i < sizes.length; i++) {
    if (i > 0 && total >= maxBytes) return i
    total += sizes[i]!
  }
  return sizes.length
}

/**
 * The workspace service's paging: EventPageParams and `maxBytes` (its answer stops as
 * eventsWithinBytes says, and says so). Its `limit` goes up to ANSWER_EVENTS_MAX, not a client's
 * EVENT_PAGE_MAX: a gateway in front asks for that many when its own client set no limit.
 */
export const WorkspaceEventPageParams = Schema.Struct({
  ...EventPageParams.fields,
  limit: pageLimit(ANSWER_EVENTS_MAX),
  maxBytes: Schema.optionalKey(
    decimalInt("a positive integer", Schema.isGreaterThanOrEqualTo(1, { message: "must be a positive integer" }))
      .pipe(Schema.annotateEncoded({ description: "Stop after the event that takes the answer's size (about its JSON's) to this many bytes" }))
  )
})

/**
 * One answer of a timeline: its events in timeline order and, when it stopped before the end
 * (budget or limit), `hasMore` and the `after` of the next read. GET /v1/tasks/:taskId/events
 * answers it, and so does the workspace service (it alone cuts the page).
 */
export const TimelinePage = Schema.Struct({
  events: Schema.Array(TaskEvent),
  hasMore: Schema.optionalKey(Schema.Literal(true)).annotate({
    description: "Present (true) when the answer stopped before the end of the timeline: read on from nextAfter"
  }),
  nextAfter: Schema.optionalKey(Schema.String).annotate({
    description: "With hasMore: the `after` of the next read (the position of this answer's last event)"
  })
}).annotate({ identifier: "TimelinePage" })
export type TimelinePage = typeof TimelinePage.Type

/** A page of `events` that stopped before the end, or the end. */
export const timelinePage = (events: ReadonlyArray<TaskEvent>, more: boolean): TimelinePage =>
  more && events.length > 0 ? { events, hasMore: true, nextAfter: events[events.length - 1]!.position } : { events }

/** The order of two positions (negative: `a` comes first), as the store orders them. */
export const comparePositions = (a: string, b: string): number => {
  const pa = positionParts(a)
  const pb = positionParts(b)
  // Transaction ids are decimal integers of any length: the longer one is the larger.
  if (pa.tx !== pb.tx) return pa.tx.length !== pb.tx.length ? pa.tx.length - pb.tx.length : pa.tx < pb.tx ? -1 : 1
  return pa.n - pb.n
}

/** The later of two positions; undefined is before every position. */
export const laterPosition = (a: string | undefined, b: string | undefined): string | undefined =>
  a === undefined ? b : b === undefined ? a : comparePositions(a, b) >= 0 ? a : b
