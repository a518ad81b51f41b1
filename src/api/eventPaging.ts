/**
 * Opt-in paging of a task's timeline (issue 12 item 5): `afterSeq` and `limit` as query
 * parameters, shared by the gateway's GET /v1/tasks/:taskId/events, its event stream and the
 * WorkspaceApi. Without them the spec's default answer (every event) is unchanged.
 */
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import * as SchemaTransformation from "effect/SchemaTransformation"

/** The most events one page may ask for. */
export const EVENT_PAGE_MAX = 1000

/**
 * Digits only (no sign, exponent, hex or spaces), then a safe integer within `checks`; `what`
 * says what it must be. Its encoded side is a string, so HttpApi's query and header codecs take
 * it as it is.
 */
const decimalInt = (what: string, ...checks: Array<SchemaAST.Check<number>>) =>
  Schema.String.check(Schema.isPattern(/^\d{1,16}$/u, { message: `must be ${what}` })).pipe(
    Schema.decodeTo(
      Schema.Finite.check(
        Schema.isInt(),
        Schema.isLessThanOrEqualTo(Number.MAX_SAFE_INTEGER, { message: `must be ${what}` }),
        ...checks
      ),
      SchemaTransformation.numberFromString
    )
  )

/** A seq as a query or header value: the events after it are wanted. */
export const SeqParam = decimalInt("an integer >= 0").pipe(Schema.annotateEncoded({ description: "Only events with a greater seq" }))

export const EventPageParams = Schema.Struct({
  afterSeq: Schema.optionalKey(SeqParam),
  limit: Schema.optionalKey(
    decimalInt(
      `an integer from 1 to ${EVENT_PAGE_MAX}`,
      Schema.isBetween({ minimum: 1, maximum: EVENT_PAGE_MAX }, { message: `must be an integer from 1 to ${EVENT_PAGE_MAX}` })
    ).pipe(Schema.annotateEncoded({ description: `At most this many events (the first ones, seq ascending), 1..${EVENT_PAGE_MAX}` }))
  )
})

/**
 * The bytes a timeline answer holds at most (issue 22 item 7): GET /events and each page of the
 * event stream stop after the event that takes them to this many (SVC_EVENTS_PAGE_BYTES), so a
 * single larger event still goes out, alone.
 */
export const DEFAULT_EVENT_PAGE_BYTES = 1024 * 1024

/** The most events one answer holds when the client sets no `limit` (the byte budget binds first by default). */
export const ANSWER_EVENTS_MAX = 10_000

/** What an event costs in an answer besides its variable fields: keys, seq, createdAt, quotes. */
export const EVENT_SIZE_OVERHEAD = 128

/** An event's size as answers count it (its JSON's length, close enough for a budget). */
export const eventSize = (e: {
  readonly taskId: string
  readonly type: string
  readonly source: string
  readonly sourceLabel?: string | undefined
  readonly groupKey?: string | undefined
  readonly payload: unknown
}) =>
  EVENT_SIZE_OVERHEAD + e.taskId.length + e.type.length + e.source.length + (e.sourceLabel?.length ?? 0) +
  (e.groupKey?.length ?? 0) + JSON.stringify(e.payload).length

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

/** The workspace service's paging: EventPageParams and `maxBytes` (its answer stops as eventsWithinBytes says). */
export const WorkspaceEventPageParams = Schema.Struct({
  ...EventPageParams.fields,
  maxBytes: Schema.optionalKey(
    decimalInt("a positive integer", Schema.isGreaterThanOrEqualTo(1, { message: "must be a positive integer" }))
      .pipe(Schema.annotateEncoded({ description: "Stop after the event that takes the answer's size (about its JSON's) to this many bytes" }))
  )
})
