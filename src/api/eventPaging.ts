/**
 * Opt-in paging of a task's timeline (issue 12 item 5): `afterSeq` and `limit` as query
 * parameters, shared by the gateway's GET /v1/tasks/:taskId/events, its event stream and the
 * WorkspaceApi. Without them the spec's default answer (every event) is unchanged.
 */
import * as Schema from "effect/Schema"

/** The most events one page may ask for. */
export const EVENT_PAGE_MAX = 1000

/** Digits only (no sign, exponent, hex or spaces), then a safe integer; `what` says what it must be. */
const decimalInt = (what: string) =>
  Schema.compose(
    Schema.String.pipe(Schema.pattern(/^\d{1,16}$/, { message: () => `must be ${what}` })),
    Schema.NumberFromString
  ).pipe(Schema.int(), Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER, { message: () => `must be ${what}` }))

/** A seq as a query or header value: the events after it are wanted. */
export const SeqParam = decimalInt("an integer >= 0").annotations({ description: "Only events with a greater seq" })

export const EventPageParams = Schema.Struct({
  afterSeq: Schema.optionalWith(SeqParam, { exact: true }),
  limit: Schema.optionalWith(
    decimalInt(`an integer from 1 to ${EVENT_PAGE_MAX}`).pipe(
      Schema.between(1, EVENT_PAGE_MAX, { message: () => `must be an integer from 1 to ${EVENT_PAGE_MAX}` })
    ).annotations({ description: `At most this many events (the first ones, seq ascending), 1..${EVENT_PAGE_MAX}` }),
    { exact: true }
  )
})
