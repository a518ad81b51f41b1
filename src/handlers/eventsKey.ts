/**
 * The events key (spec §5.3): with SVC_INTERNAL_EVENTS_KEY set, `POST /v1/tasks/:taskId/events`
 * must carry it in `x-svc-events-key`, 401 otherwise; compared in constant time
 * (../lib/secretMatcher.ts).
 *
 * Judged from the headers, before the body is read (`refuseWithoutEventsKey`, an api-wide
 * middleware in front of the JSON input check): a caller without the key learns nothing of how
 * its body would have been read, malformed JSON or a field missing, and no body of such a caller
 * is parsed. The events handler asks the same question again of the request it is given.
 */
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Unauthorized } from "../api/errors.js"
import { EVENTS_KEY_HEADER } from "../api/events.js"
import { type ApiRoutes, matchPath } from "../http/errors/unrouted.js"
import { secretMatcher } from "../lib/secretMatcher.js"

/** Whether a request that sent `given` (the header's value, if any) may append events: Unauthorized otherwise. */
export const eventsKeyCheck = (key: Option.Option<Redacted.Redacted<string>>) => {
  const expected = Option.map(key, (k) => secretMatcher(Redacted.value(k)))
  return (given: string | undefined): Effect.Effect<void, Unauthorized> =>
    Option.match(expected, {
      onNone: () => Effect.void,
      onSome: (want) =>
        given !== undefined && given !== "" && want(given)
          ? Effect.void
          : Effect.fail(new Unauthorized({ message: `Missing or invalid ${EVENTS_KEY_HEADER} header` }))
    })
}

/**
 * Wraps an HttpApp: a POST the API routes to the events group's `appendEvent` is refused 401
 * without the key, before anything reads its body. `api`: the API it is served by (the path is
 * matched as the router reads it, ../http/errors/unrouted.ts); no key set, nothing is asked.
 */
export const refuseWithoutEventsKey = (api: ApiRoutes, key: Option.Option<Redacted.Redacted<string>>) => {
  const check = eventsKeyCheck(key)
  const path = api.groups["events"]!.endpoints["appendEvent"]!.path
  return <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E | Unauthorized, R | HttpServerRequest.HttpServerRequest> =>
    Option.isNone(key) ? app : Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      request.method === "POST" && matchPath(api, request.url).some((m) => m.method.toUpperCase() === "POST" && m.path === path)
        ? Effect.andThen(check(request.headers[EVENTS_KEY_HEADER]), app)
        : app)
}
