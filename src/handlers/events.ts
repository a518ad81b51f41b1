import * as ParsedPayload from "../http/input/parsedPayload.js"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Effect from "effect/Effect"
import { GatewayApi } from "../api/Api.js"
import { BadRequest } from "../api/errors.js"
import { EVENTS_KEY_HEADER, LAST_EVENT_ID_HEADER } from "../api/events.js"
import { EventStreams, type StreamOutput } from "../services/EventStreams.js"
import { appendTaskEvent, readTimelinePage } from "../services/taskEvents.js"
import { TenantConfig } from "../config/TenantConfig.js"
import { eventsKeyCheck } from "./eventsKey.js"


/**
 * Completes when the client of `request` has gone: its socket ended (the client's FIN; Node keeps
 * a half-closed socket open while an answer is in progress, and would notice only at the next
 * write) or closed.
 */
const clientGone = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    const socket = NodeHttpServerRequest.toIncomingMessage(request).socket
    if (socket.readableEnded || socket.destroyed) return resume(Effect.void)
    const gone = () => resume(Effect.void)
    socket.once("end", gone)
    socket.once("close", gone)
    return Effect.sync(() => {
      socket.off("end", gone)
      socket.off("close", gone)
    })
  })

/** The response's socket, for the stream to see a client that stopped reading and to cut it off. */
const output = (request: HttpServerRequest.HttpServerRequest): StreamOutput => {
  const res = NodeHttpServerRequest.toServerResponse(request)
  // writableLength: the response's own buffer plus its socket's, bytes the client has not taken.
  return {
    pending: () => res.writableLength,
    // A socket's bytesWritten counts what it still buffers too.
    flushed: () => res.socket === null ? 0 : res.socket.bytesWritten - res.socket.writableLength,
    close: () => res.socket?.destroy()
  }
}

/** A refusal of the store's `after` told as one of the Last-Event-ID header's. */
const renamedAfter = <E>(error: E): E | BadRequest =>
  error instanceof BadRequest && error.message.startsWith("after: ")
    ? new BadRequest({ message: `${LAST_EVENT_ID_HEADER}: ${error.message.slice("after: ".length)}` })
    : error

export const EventsLive = ParsedPayload.group(GatewayApi, "events", (handlers) =>
  Effect.gen(function*() {
    const config = yield* TenantConfig
    const streams = yield* EventStreams
    // Judged before the body is read (./eventsKey.ts, an api-wide middleware); asked again here of
    // the request this handler is given.
    const authorize = eventsKeyCheck(config.eventsKey)

    return handlers
      .handle("appendEvent", ({ headers, params, payload }) =>
        Effect.gen(function*() {
          yield* authorize(headers[EVENTS_KEY_HEADER])
          const event = yield* appendTaskEvent(params.taskId, payload)
          return { ok: true as const, event }
        }))
      .handle("listEvents", ({ params, query }) => readTimelinePage(params.taskId, query, streams.settings.pageBytes))
      .handle("streamEvents", ({ headers, params, query }) =>
        Effect.map(
          // A reconnecting EventSource sends Last-Event-ID and repeats the original URL: the header wins.
          Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
            streams.open(params.taskId, headers[LAST_EVENT_ID_HEADER] ?? query.after, clientGone(request), output(request)).pipe(
              // The store names its parameter, `after`; this position came from the header.
              Effect.mapError((error) => headers[LAST_EVENT_ID_HEADER] === undefined ? error : renamedAfter(error))
            )),
          (body) =>
            HttpServerResponse.stream(body, {
              contentType: "text/event-stream",
              // Not stored, not transformed or buffered by a proxy on the way.
              headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
            })
        ))
  }))
