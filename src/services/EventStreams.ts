/**
 * Live task timelines as Server-Sent Events (GET /v1/tasks/:taskId/events/stream).
 *
 * Each open stream reads the store itself, in the store's order (`after` a position, one
 * indexed range read per wake-up), and sleeps until something may be new: no request per viewer per second.
 * What wakes it:
 * - the in-process bell (./TaskEventBell.ts), rung by every write of this process that
 *   commits events (an append through the API, the embedded engine applying a signal): the
 *   stream reads within milliseconds;
 * - for writes by other processes (a workspace service behind SVC_WORKSPACE_URL, a second
 *   process on the same database file), one poll per watched task every SVC_EVENTS_POLL_MS,
 *   shared by all the streams of that task: a one-row probe after the last position they have.
 *
 * Streams are capped (SVC_EVENT_STREAMS_MAX: 503 past it), send a `: keep-alive` comment after
 * SVC_EVENTS_KEEPALIVE_MS of silence, end when the client goes away (the server interrupts the
 * response), when the process drains (src/http/server/Drain.ts) and when this layer closes; a client
 * resumes with Last-Event-ID.
 *
 * Memory: a page is at most SVC_EVENTS_PAGE_BYTES (plus the one event that
 * takes it past), and nothing is made before the socket has taken the previous page (the server
 * waits for 'drain' before it pulls again; no queue in between), so a stream holds at most one
 * page. A client that takes none of its pending bytes for SVC_EVENTS_STREAM_STALL_MS is
 * disconnected: its slot and page are freed, and an EventSource reconnects with Last-Event-ID.
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import { type BadRequest, type NotFound, ServiceUnavailable, type UpstreamError } from "../api/errors.js"
import type { TaskEvent } from "../api/resources.js"
import { comparePositions, DEFAULT_EVENT_PAGE_BYTES, laterPosition } from "../api/eventPaging.js"
import { ProcessDrain } from "../lib/ProcessDrain.js"
import { yieldToEventLoop } from "../lib/eventLoop.js"
import { Tenant } from "./Tenant.js"
import { eventPageBytesSetting } from "./taskEvents.js"
import { TaskEventBell } from "./TaskEventBell.js"
import { intSetting } from "../config/read.js"
import { defaultOf } from "../config/settings.js"
import { WorkspaceClient, type WorkspaceClientService } from "../upstream/WorkspaceClient.js"

export interface EventStreamSettings {
  /** Streams this process serves at once (SVC_EVENT_STREAMS_MAX, default 100). */
  readonly maxStreams: number
  /** The fallback poll per watched task, for other processes' writes (SVC_EVENTS_POLL_MS, default 1000). */
  readonly pollMs: number
  /** The longest silence before a `: keep-alive` comment (SVC_EVENTS_KEEPALIVE_MS, default 15000). */
  readonly keepAliveMs: number
  /** The bytes of one page of a stream and of one GET /events answer (SVC_EVENTS_PAGE_BYTES, default 1 MiB). */
  readonly pageBytes: number
  /** A client that takes none of its pending bytes for this long is disconnected (SVC_EVENTS_STREAM_STALL_MS, default 30000). */
  readonly stallMs: number
}

export const DEFAULT_EVENT_STREAM_SETTINGS: EventStreamSettings = {
  maxStreams: defaultOf("SVC_EVENT_STREAMS_MAX"),
  pollMs: defaultOf("SVC_EVENTS_POLL_MS"),
  keepAliveMs: defaultOf("SVC_EVENTS_KEEPALIVE_MS"),
  pageBytes: DEFAULT_EVENT_PAGE_BYTES,
  stallMs: defaultOf("SVC_EVENTS_STREAM_STALL_MS")
}

export const eventStreamSettingsFromEnv: Config.Config<EventStreamSettings> = Config.all({
  maxStreams: intSetting("SVC_EVENT_STREAMS_MAX"),
  pollMs: intSetting("SVC_EVENTS_POLL_MS"),
  keepAliveMs: intSetting("SVC_EVENTS_KEEPALIVE_MS"),
  pageBytes: eventPageBytesSetting,
  stallMs: intSetting("SVC_EVENTS_STREAM_STALL_MS")
})

/** The response's socket as a stream watches it: bytes written but not yet taken by the client. */
export interface StreamOutput {
  readonly pending: () => number
  /** Bytes handed to the network so far (only grows while the client reads). */
  readonly flushed: () => number
  /** Disconnects the client (the server then ends the response). */
  readonly close: () => void
}

/** Events read per store query while a stream catches up. */
export const STREAM_PAGE = 500

/**
 * A stream's page is at most this many bytes even when SVC_EVENTS_PAGE_BYTES is larger: the
 * client gets the same events either way, in more writes. 100 streams each making 1 MiB pages of
 * a 4 MB timeline took RSS from 477 to 737 MB in bench S8 (668 vs 525 MB with 256 KiB pages).
 */
export const STREAM_PAGE_BYTES = 256 * 1024

export interface EventStreamsService {
  /**
   * The SSE body of the task's timeline after position `after` (all of it when undefined). Fails
   * before anything is sent: NotFound for an unknown or other tenant's task, BadRequest (naming
   * `after`) for a position past every one the store has given out, ServiceUnavailable when
   * SVC_EVENT_STREAMS_MAX streams are open.
   */
  readonly open: (
    taskId: string,
    after: string | undefined,
    /** Completes when the client has gone: the stream ends then. */
    clientGone?: Effect.Effect<void>,
    /** Watched for a client that stopped reading. */
    output?: StreamOutput
  ) => Effect.Effect<Stream.Stream<Uint8Array>, NotFound | BadRequest | ServiceUnavailable | UpstreamError, Tenant | WorkspaceClient>
  readonly settings: EventStreamSettings
  /** Streams open now, and tasks with a poller now (tests, metrics). */
  readonly stats: () => { readonly streams: number; readonly watchedTasks: number }
}

/** One watched task: its viewers share the wake-ups and one fallback poller. */
interface Watch {
  viewers: number
  /** The last position any viewer has sent: the poller probes after it. */
  known: string | undefined
  /** Completed (and replaced) at every ring. */
  next: Deferred.Deferred<void>
  readonly unlisten: () => void
  poller: Fiber.Fiber<void> | undefined
}

const encoder = new TextEncoder()

/** One SSE message per event: `id` is its position, `data` the event's JSON (one line: JSON escapes newlines). */
export const sseFrames = (events: ReadonlyArray<TaskEvent>): Uint8Array =>
  encoder.encode(events.map((e) => `id: ${e.position}\ndata: ${JSON.stringify(e)}\n\n`).join(""))

const KEEP_ALIVE = encoder.encode(": keep-alive\n\n")

/** How long a client waits before it reconnects after a stream ended (the SSE `retry` field). */
export const RECONNECT_MS = 1000

const OPENING = encoder.encode(`retry: ${RECONNECT_MS}\n\n`)

export const makeEventStreams = (settings: EventStreamSettings) =>
  Effect.gen(function*() {
    const bell = yield* TaskEventBell
    const scope = yield* Effect.scope
    const drain = yield* Effect.serviceOption(ProcessDrain)
    // Completed when the process drains or this layer closes: every stream then ends cleanly.
    const closing = yield* Deferred.make<void>()
    const close = () => Deferred.doneUnsafe(closing, Exit.void)
    if (Option.isSome(drain)) {
      const unsubscribe = drain.value.onDrain(close)
      yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
    }
    yield* Effect.addFinalizer(() => Effect.sync(close))

    let streams = 0
    const watches = new Map<string, Watch>()

    /**
     * Pages are read and framed one at a time across all streams, each after a turn of the event
     * loop: 100 streams woken at once made their pages in one pass (5.5 s of blocked event loop
     * in bench S8, health with it); now other requests go between any two pages.
     */
    const pages = Semaphore.makeUnsafe(1)
    const oneAtATime = <A, E, R>(effect: Effect.Effect<A, E, R>) => pages.withPermits(1)(Effect.andThen(yieldToEventLoop, effect))

    const ring = (watch: Watch) => {
      const done = watch.next
      watch.next = Deferred.makeUnsafe<void>()
      Deferred.doneUnsafe(done, Exit.void)
    }

    /** The fallback for other processes' writes: a one-row probe after the last position sent. */
    const poll = (watch: Watch, workspace: WorkspaceClientService, tenantId: string, taskId: string) =>
      Effect.gen(function*() {
        for (;;) {
          yield* Effect.sleep(settings.pollMs)
          const after = watch.known
          const probe = yield* Effect.result(
            workspace.listEvents(tenantId, taskId, { after, limit: 1 })
          )
          if (Result.isSuccess(probe) && probe.success.events.length > 0) ring(watch)
        }
      })

    const watch = (workspace: WorkspaceClientService, tenantId: string, taskId: string) =>
      Effect.acquireRelease(
        Effect.suspend(() => {
          const existing = watches.get(taskId)
          if (existing !== undefined) {
            existing.viewers++
            return Effect.succeed(existing)
          }
          const created: Watch = {
            viewers: 1,
            known: undefined,
            next: Deferred.makeUnsafe<void>(),
            unlisten: bell.listen(taskId, () => ring(created)),
            poller: undefined
          }
          watches.set(taskId, created)
          return Effect.map(
            // Forked from an acquire (uninterruptible): made interruptible, or the release would wait forever.
            Effect.forkIn(Effect.interruptible(poll(created, workspace, tenantId, taskId)), scope),
            (fiber) => {
              created.poller = fiber
              return created
            }
          )
        }),
        (w) =>
          Effect.suspend(() => {
            if (--w.viewers > 0) return Effect.void
            watches.delete(taskId)
            w.unlisten()
            return w.poller === undefined ? Effect.void : Fiber.interrupt(w.poller)
          })
      )

    const slot = Effect.acquireRelease(
      Effect.sync(() => {
        streams++
      }),
      () =>
        Effect.sync(() => {
          streams--
        })
    )

    const tooMany = () =>
      new ServiceUnavailable({
        message: `Too many event streams open (${settings.maxStreams}, SVC_EVENT_STREAMS_MAX); retry later`
      })

    /**
     * Completes (after disconnecting the client) once bytes have been waiting in the socket for
     * stallMs without the client taking any of them.
     */
    const stalled = (output: StreamOutput) =>
      Effect.gen(function*() {
        const every = Math.max(10, Math.min(1000, Math.floor(settings.stallMs / 4)))
        let last = output.flushed()
        let progressAt = Date.now()
        for (;;) {
          yield* Effect.sleep(every)
          const pending = output.pending()
          const flushed = output.flushed()
          const now = Date.now()
          // Progress is bytes leaving, not a smaller backlog: a new page may have been queued since.
          if (pending === 0 || flushed > last) progressAt = now
          last = flushed
          if (now - progressAt >= settings.stallMs) {
            yield* Effect.logInfo(`event stream closed: the client took none of ${pending} pending bytes in ${settings.stallMs} ms`)
            output.close()
            return
          }
        }
      })

    const open: EventStreamsService["open"] = (taskId, after, clientGone = Effect.never, output) =>
      Effect.gen(function*() {
        if (streams >= settings.maxStreams) return yield* Effect.fail(tooMany())
        const workspace = yield* WorkspaceClient
        // 404 for another tenant's or an unknown task, before the stream starts.
        const { tenant } = yield* (yield* Tenant).requireTask(taskId)
        const pageBytes = Math.min(settings.pageBytes, STREAM_PAGE_BYTES)
        /** One page: at most STREAM_PAGE events and pageBytes; the store says whether more follows at once. */
        const read = (from: string | undefined) =>
          oneAtATime(Effect.map(
            workspace.listEvents(tenant.id, taskId, { after: from, limit: STREAM_PAGE, maxBytes: pageBytes }),
            (page) => ({ batch: page.events, full: page.hasMore === true })
          ))
        const first = yield* read(after)

        // Stream.unwrap runs the effect in the stream's scope: the slot and the watch last as long as the stream.
        const body = Stream.unwrap(Effect.gen(function*() {
          if (streams >= settings.maxStreams) return Stream.empty
          yield* slot
          const w = yield* watch(workspace, tenant.id, taskId)
          let cursor = after
          // What this stream starts after is known to exist: the poll need not find it again.
          w.known = laterPosition(w.known, cursor)
          let pending: { batch: ReadonlyArray<TaskEvent>; full: boolean } | undefined = first
          const sent = (batch: ReadonlyArray<TaskEvent>) => {
            cursor = laterPosition(cursor, batch[batch.length - 1]!.position)
            w.known = laterPosition(w.known, cursor)
            return sseFrames(batch)
          }
          // The next page, made only when the server pulls it, that is once the socket has taken
          // the previous one (no queue: a stream holds one page). A read follows a ring (taken
          // before the read it follows, so a ring during a read is not lost), or comes at once
          // after a full page; one event costs each stream one read. The first page was read
          // before this stream watched the task: one more read follows it. After keepAliveMs
          // without a ring, a keep-alive comment. A read that fails ends the stream: the client
          // reconnects with Last-Event-ID.
          let woken = w.next
          let readNow = true
          const nextChunk = Effect.gen(function*() {
            for (;;) {
              if (!readNow) {
                const rang = yield* Effect.timeoutOption(Deferred.await(woken), settings.keepAliveMs)
                if (Option.isNone(rang)) return KEEP_ALIVE
              }
              let page: { batch: ReadonlyArray<TaskEvent>; full: boolean }
              if (pending !== undefined) {
                page = pending
                pending = undefined
                readNow = true
              } else {
                woken = w.next
                page = yield* read(cursor)
                readNow = page.full
              }
              // Only forward (a page read before a send may overlap it): each event once.
              const fresh = cursor === undefined ? page.batch : page.batch.filter((e) => comparePositions(e.position, cursor!) > 0)
              if (fresh.length > 0) return yield* oneAtATime(Effect.sync(() => sent(fresh)))
            }
          })
          const events = Stream.fromEffectRepeat(nextChunk).pipe(
            Stream.catch((error) =>
              Stream.fromEffectDrain(Effect.logWarning(`event stream of task ${taskId} ended: a read failed: ${error.message}`))
            )
          )
          const stop = output === undefined
            ? Effect.race(Deferred.await(closing), clientGone)
            : Effect.raceAll([Deferred.await(closing), clientGone, stalled(output)])
          // The first bytes go out at once (Node sends the headers with them, and an EventSource
          // opens then), telling the client to reconnect after RECONNECT_MS when the stream ends.
          return events.pipe(
            Stream.prepend([OPENING]),
            Stream.interruptWhen(stop)
          )
        }))
        return body
      })

    return {
      open,
      settings,
      stats: () => ({ streams, watchedTasks: watches.size })
    } satisfies EventStreamsService
  })

export class EventStreams extends Context.Service<EventStreams, EventStreamsService>()("services/EventStreams") {
  static readonly layerWith = (settings: EventStreamSettings) => Layer.effect(EventStreams, makeEventStreams(settings))
  /**
   * Settings from the environment (SVC_EVENT_STREAMS_MAX, SVC_EVENTS_POLL_MS, SVC_EVENTS_KEEPALIVE_MS,
   * SVC_EVENTS_PAGE_BYTES, SVC_EVENTS_STREAM_STALL_MS).
   */
  static readonly layer = Layer.unwrap(Effect.map(eventStreamSettingsFromEnv, EventStreams.layerWith))
}
