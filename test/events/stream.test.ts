/**
 * GET /v1/tasks/:taskId/events/stream, in process over the embedded
 * store: framing, resume, live delivery of API and engine events, 404, keep-alive, the
 * stream limit and the release of everything a stream holds when its client goes away.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { makeTaskEventBell, TaskEventBell } from "../../src/services/TaskEventBell.js"
import { makeGateway, raw } from "../support/gateway.js"
import { EXPENSE_TASK, GLOBEX_TASK, MISSING } from "../support/world.js"
import { TestStore, type TestWorkspace } from "../support/storeWorkspace.js"
import { envProvider, withEnv } from "../fixtures/config.js"
import { baseUrl, openSse } from "./sse.js"

/** A gateway with these stream settings (SVC_EVENT_STREAMS_MAX, SVC_EVENTS_POLL_MS, SVC_EVENTS_KEEPALIVE_MS). */
const withStreams = <A, E>(
  settings: Record<string, string>,
  body: (base: string, workspace: TestWorkspace) => Effect.Effect<A, E, any>
) => {
  const { layer } = makeGateway()
  const provider = envProvider(settings).pipe(ConfigProvider.orElse(ConfigProvider.fromEnv()))
  return Effect.provideService(
    Effect.provide(Effect.flatMap(Effect.zip(baseUrl, Effect.service(TestStore)), ([base, workspace]) => body(base, workspace)), layer),
    ConfigProvider.ConfigProvider,
    provider
  ) as Effect.Effect<A, E, never>
}

const streamUrl = (base: string, taskId = EXPENSE_TASK, query = "") => `${base}/v1/tasks/${taskId}/events/stream${query}`

const post = (seq: number, payload: Record<string, unknown> = { n: seq }) =>
  raw("POST", `/v1/tasks/${EXPENSE_TASK}/events`, { type: "note", source: "test", seq, payload })

/** The task's events as GET /events lists them. */
const listed = Effect.map(raw("GET", `/v1/tasks/${EXPENSE_TASK}/events`), (res) =>
  res.body.events as Array<{ seq: number; position: string; origin: string }>)

/** The position of the task's event of this seq (the seqs are distinct here). */
const positionOf = (seq: number) => Effect.map(listed, (events) => events.find((e) => e.seq === seq)!.position)

describe("GET /v1/tasks/:taskId/events/stream", () => {
  it.live("SSE framing: one message per event, id = its position, data = the event exactly as GET /events has it", () =>
    withStreams({}, (base) =>
      Effect.gen(function*() {
        yield* post(2, { text: "two\nlines", nested: { a: [1, 2] } })
        const events = yield* listed
        expect(events.map((e) => e.seq)).toEqual([1, 2])
        const sse = yield* Effect.promise(() => openSse(streamUrl(base)))
        try {
          expect(sse.status).toBe(200)
          expect(sse.headers.get("content-type")).toBe("text/event-stream")
          expect(sse.headers.get("cache-control")).toBe("no-store")
          for (const event of events) {
            const frame = yield* Effect.promise(() => sse.nextEvent())
            expect(frame.id).toBe(event.position)
            expect(frame.event).toBeUndefined() // the default "message": EventSource.onmessage gets it
            expect(frame.data).toBe(JSON.stringify(event))
          }
          // Each message is exactly `id:` and `data:` lines ended by a blank line.
          expect(sse.received()).toContain(`id: ${events[1]!.position}\ndata: ${JSON.stringify(events[1])}\n\n`)
        } finally {
          sse.close()
        }
      })))

  it.live("resumes after Last-Event-ID (or ?after=), a position; the header wins over the query", () =>
    withStreams({}, (base) =>
      Effect.gen(function*() {
        for (const seq of [2, 3, 4]) expect((yield* post(seq)).status).toBe(200)
        const at = new Map((yield* listed).map((e) => [e.seq, e.position]))
        expect([...at.keys()]).toEqual([1, 2, 3, 4])
        const ids = (query: string, headers: Record<string, string> = {}) =>
          Effect.promise(async () => {
            const sse = await openSse(streamUrl(base, EXPENSE_TASK, query), headers)
            try {
              return (await sse.nextEvent()).id
            } finally {
              sse.close()
            }
          })
        expect(yield* ids("")).toBe(at.get(1))
        expect(yield* ids("", { "last-event-id": at.get(2)! })).toBe(at.get(3))
        expect(yield* ids(`?after=${at.get(3)}`)).toBe(at.get(4))
        expect(yield* ids(`?after=${at.get(1)}`, { "last-event-id": at.get(3)! })).toBe(at.get(4))
        const bad = yield* Effect.promise(() => openSse(streamUrl(base), { "last-event-id": "abc" }))
        expect(bad.status).toBe(400)
        expect(JSON.parse(yield* Effect.promise(() => bad.text())).message).toContain("last-event-id")
        const badQuery = yield* Effect.promise(() => openSse(streamUrl(base, EXPENSE_TASK, "?after=1-2-3")))
        expect(badQuery.status).toBe(400)
        expect(JSON.parse(yield* Effect.promise(() => badQuery.text())).message).toContain("after")
        // The old cursor is not taken for the new one: an unknown parameter.
        const oldCursor = yield* Effect.promise(() => openSse(streamUrl(base, EXPENSE_TASK, "?afterSeq=1")))
        expect(oldCursor.status).toBe(400)
        expect(JSON.parse(yield* Effect.promise(() => oldCursor.text())).message).toContain("afterSeq")
      })))

  it.live("an event posted through the API reaches an open stream within a second", () =>
    withStreams({ SVC_EVENTS_POLL_MS: "60000" }, (base) =>
      Effect.gen(function*() {
        const sse = yield* Effect.promise(() => openSse(streamUrl(base)))
        try {
          const first = yield* positionOf(1)
          expect((yield* Effect.promise(() => sse.nextEvent())).id).toBe(first)
          for (const seq of [7, 8]) {
            const started = performance.now()
            const posted = yield* post(seq)
            expect(posted.status).toBe(200)
            const frame = yield* Effect.promise(() => sse.nextEvent(1000))
            expect(frame.id).toBe(posted.body.event.position)
            expect(JSON.parse(frame.data!)).toMatchObject({ seq, origin: "producer" })
            // The poll is a minute away: only the bell can have woken the stream.
            expect(performance.now() - started).toBeLessThan(1000)
          }
        } finally {
          sse.close()
        }
      })))

  it.live("events the engine writes (an approval) reach an open stream within a second", () =>
    withStreams({ SVC_EVENTS_POLL_MS: "60000" }, (base) =>
      Effect.gen(function*() {
        const first = yield* positionOf(1)
        const sse = yield* Effect.promise(() => openSse(streamUrl(base, EXPENSE_TASK, `?after=${first}`)))
        try {
          const started = performance.now()
          const res = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/action`, { type: "approved", comments: "fine" })
          expect(res.status).toBe(200)
          const frame = yield* Effect.promise(() => sse.nextEvent(1000))
          expect(performance.now() - started).toBeLessThan(1000)
          const event = JSON.parse(frame.data!)
          expect(event).toMatchObject({
            taskId: EXPENSE_TASK,
            type: "step.completed",
            source: "workspace",
            origin: "gateway",
            payload: { stepId: "review_expenses", decision: "approve", reason: "fine" }
          })
          // The gateway's record takes no producer seq: it reads with seq = its position.
          expect(frame.id).toBe(event.position)
          expect(event.seq).toBe(Number(event.position))
        } finally {
          sse.close()
        }
      })))

  it.live("another tenant's or a missing task: 404 in the error shape, before any stream", () =>
    withStreams({}, (base) =>
      Effect.gen(function*() {
        for (const task of [GLOBEX_TASK, MISSING]) {
          const sse = yield* Effect.promise(() => openSse(streamUrl(base, task)))
          expect(sse.status).toBe(404)
          expect(sse.headers.get("content-type")).toMatch(/application\/json/)
          expect(JSON.parse(yield* Effect.promise(() => sse.text()))).toEqual({
            statusCode: 404,
            error: "Not Found",
            message: expect.any(String)
          })
        }
      })))

  it.live("a keep-alive comment comes when nothing else does", () =>
    withStreams({ SVC_EVENTS_KEEPALIVE_MS: "100" }, (base) =>
      Effect.gen(function*() {
        const first = yield* positionOf(1)
        const sse = yield* Effect.promise(() => openSse(streamUrl(base, EXPENSE_TASK, `?after=${first}`)))
        try {
          // First the reconnection delay, sent at once; then, with nothing to send, a comment.
          expect(yield* Effect.promise(() => sse.next(500))).toEqual({ retry: "1000" })
          const frame = yield* Effect.promise(() => sse.next(1000))
          expect(frame).toEqual({ comment: "keep-alive" })
        } finally {
          sse.close()
        }
      })))

  it.live("the stream limit answers 503; a client going away frees its slot and its task's poller", () =>
    withStreams({ SVC_EVENT_STREAMS_MAX: "1", SVC_EVENTS_POLL_MS: "50" }, (base, workspace) =>
      Effect.gen(function*() {
        const first = yield* Effect.promise(() => openSse(streamUrl(base)))
        expect(first.status).toBe(200)
        yield* Effect.promise(() => first.nextEvent())
        const second = yield* Effect.promise(() => openSse(streamUrl(base)))
        expect(second.status).toBe(503)
        expect(JSON.parse(yield* Effect.promise(() => second.text()))).toMatchObject({ statusCode: 503, error: "Service Unavailable" })
        expect(second.headers.get("retry-after")).not.toBeNull()
        // While the stream is open its task is polled (every 50 ms here).
        const reads = () => workspace.calls.get("listEvents") ?? 0
        const before = reads()
        yield* Effect.sleep(300)
        expect(reads()).toBeGreaterThan(before)
        first.close()
        yield* Effect.promise(() => first.ended)
        // The slot comes back once the server has seen the client go.
        let reopened: Awaited<ReturnType<typeof openSse>> | undefined
        for (let i = 0; i < 40 && reopened === undefined; i++) {
          yield* Effect.sleep(50)
          const again = yield* Effect.promise(() => openSse(streamUrl(base)))
          if (again.status === 200) reopened = again
        }
        expect(reopened?.status).toBe(200)
        reopened!.close()
        yield* Effect.sleep(200)
        // No stream left: no poller either (no timer or fiber reading on).
        const settled = reads()
        yield* Effect.sleep(300)
        expect(reads()).toBe(settled)
      })))

  it.live("idle streams cost one probe per watched task per poll interval, however many watch it; an event one read each", () =>
    withStreams({ SVC_EVENTS_POLL_MS: "250" }, (base, workspace) =>
      Effect.gen(function*() {
        const reads = () => workspace.calls.get("listEvents") ?? 0
        const viewers = yield* Effect.promise(() => Promise.all(Array.from({ length: 20 }, () => openSse(streamUrl(base)))))
        try {
          yield* Effect.promise(() => Promise.all(viewers.map((v) => v.nextEvent())))
          yield* Effect.sleep(300)
          const idleFrom = reads()
          yield* Effect.sleep(1000)
          const idle = reads() - idleFrom
          // About 4 probes in a second at 250 ms, for 20 viewers: not 20 x 4.
          expect(idle).toBeGreaterThanOrEqual(2)
          expect(idle).toBeLessThanOrEqual(6)
          const before = reads()
          expect((yield* post(50)).status).toBe(200)
          yield* Effect.promise(() => Promise.all(viewers.map((v) => v.nextEvent(1000))))
          const perEvent = reads() - before
          // One read per viewer (plus at most a probe or two meanwhile).
          expect(perEvent).toBeGreaterThanOrEqual(20)
          expect(perEvent).toBeLessThanOrEqual(24)
          console.log(`20 idle streams: ${idle} store reads per second (poll 250 ms); one event: ${perEvent} reads`)
        } finally {
          viewers.forEach((v) => v.close())
        }
      })))

  it.live("an engine in another process (no shared bell): the gateway rings after its own signal, so its events come at once", () => {
    // The gateway hears only its own bell: the workspace's rings (standing for another process's) do not reach it.
    const { layer } = makeGateway()
    const isolated = Layer.provide(layer, Layer.succeed(TaskEventBell, makeTaskEventBell()))
    return Effect.provide(
      Effect.gen(function*() {
        const base = yield* baseUrl
        const first = yield* positionOf(1)
        const sse = yield* Effect.promise(() => openSse(streamUrl(base, EXPENSE_TASK, `?after=${first}`)))
        try {
          const started = performance.now()
          expect((yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/action`, { type: "approved" })).status).toBe(200)
          const frame = yield* Effect.promise(() => sse.nextEvent(1000))
          expect(performance.now() - started).toBeLessThan(1000)
          expect(JSON.parse(frame.data!)).toMatchObject({ type: "step.completed", source: "workspace" })
        } finally {
          sse.close()
        }
      }),
      isolated
    ).pipe(withEnv({ SVC_EVENTS_POLL_MS: "60000" }))
  })
})
