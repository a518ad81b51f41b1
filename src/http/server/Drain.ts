/**
 * Graceful shutdown of a process's HTTP servers (the gateway's port, its admin listener, the
 * server of `npm run workspace`), started by SIGTERM or SIGINT: every request received is
 * answered, the last on each connection with `Connection: close`, within SVC_SHUTDOWN_GRACE_MS.
 * The application keeps serving while it drains: the scope that holds the servers, handlers and
 * workspace closes only after the drain (`drainOnSignals`). The steps are on `Drain`.
 */
import * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import type * as http from "node:http"
import * as net from "node:net"
import type { Socket } from "node:net"
import { InFlight } from "./InFlight.js"

export interface DrainOutcome {
  /** True when the grace period ran out (or a second signal came) and what was open was cut. */
  readonly cut: boolean
  /** The cut came from a second signal, not from the grace period running out. */
  readonly bySignal: boolean
  /** From the start of the drain to its end. */
  readonly elapsedMs: number
  /** Requests whose answer was not complete when they were cut. */
  readonly cutRequests: number
  /** Connections closed by force (with or without a request on them). */
  readonly cutConnections: number
  /**
   * Connections closed because their client stopped sending a request partway (its headers or
   * its body: nothing for STALLED_MS): a request never received whole, which the client sends
   * again elsewhere; not a cut.
   */
  readonly stalled: number
}

/**
 * The most turns of the event loop the listeners keep accepting queued connections after the
 * signal (one per turn; Node's accept queue holds 511).
 */
export const ACCEPT_PHASE_MAX_TURNS = 1024

/**
 * How long a connection must have been idle (since its last answer, or since it was accepted
 * when it never sent a request) before the drain closes it. A client that reacts to an answer
 * writes its next request within milliseconds (26 ms under load in the run that lost two);
 * a connection idle for longer is closed as Node closes one past its keep-alive timeout.
 */
export const IDLE_LINGER_MS = 500

/**
 * How long, during a drain, a request partway in (its headers, or a body the server is reading)
 * may send nothing before its connection is closed: as long as a new connection may send nothing
 * (SVC_FIRST_BYTE_TIMEOUT_MS's default). Bodies up to 64 KiB have no pace
 * (SVC_MIN_BODY_BYTES_PER_SECOND) and SVC_REQUEST_TIMEOUT_MS is 60 s, so one client that stopped
 * sending held every drain for the whole grace period and made the exit 1.
 */
export const STALLED_MS = 2_000

/** How often the drain looks for connections idle long enough to close. */
const IDLE_CHECK_MS = 20

/**
 * A check this late ran after the event loop was held (a large body's parse: 2-7 s for 15 MiB of
 * `[{},...]`): timers run before sockets are read, so the bytes that came meanwhile are not
 * counted yet. Such a check closes nothing and restarts every stall clock.
 */
const LATE_CHECK_MS = 50

/** Per connection: answers in progress, and since when (and at what bytes read) it is idle. */
interface ConnectionState {
  active: number
  idleSince: number
  bytesAtIdle: number
  /**
   * While a request is partway in during a drain: the bytes read when it last made progress, and
   * when (-1: not watched).
   */
  bytesAtStall: number
  stallSince: number
  /**
   * The body of its last request is still arriving after its answer, read and thrown away (a
   * refused body, nodeServer.ts; Node's own discard of a body nobody read, a 404 before its body
   * came): those bytes are no request, so the connection is idle while its client sends the rest,
   * and a drain closes it after the linger like any idle one (it held the drain for the whole grace
   * period, then exited 1, while the client kept sending a body already answered 413).
   */
  discarding: boolean
  /** The request admitted last on it: the one answer that closes the connection in a drain. */
  last: http.ServerResponse | undefined
  /** Idle for this long with no request begun, it is closed (`track`'s `requestlessMs`). */
  requestlessMs: number
}

/**
 * How often connections are looked at for `requestlessMs` (a bound of 16 s by default, so a
 * second late at most).
 */
const REQUESTLESS_CHECK_MS = 1_000

/** How much the shutdown after the drain (closing the database, ...) may take before the process exits 1. */
export const SHUTDOWN_BACKSTOP_MS = 5_000

/**
 * How a drain goes:
 * 1. The signal is logged and `draining` turns true: readiness (/readyz) answers 503 from then on.
 * 2. Every answer not yet started goes out with `Connection: close`, and so does the answer to
 *    any request still arriving on a connection that is open.
 * 3. Every listener stops accepting as soon as the accept queue is empty (Node accepts one
 *    queued connection per turn of the event loop, so it closes after a turn that accepted
 *    none; at the latest after ACCEPT_PHASE_MAX_TURNS turns or half the grace period): a
 *    client whose connection was established before the signal is served, not reset. Then the
 *    idle connections are closed (those between requests, and those that never sent a byte),
 *    each once it has been idle for IDLE_LINGER_MS: an answer that went out keep-alive just
 *    before the signal was handled invites the client to write its next request on the same
 *    connection at once, and closing it then would reset that request (seen: requests written
 *    26 ms after such an answer, reset). Such a request is answered, with `Connection: close`.
 *    Node's own `server.close()` closes idle connections at once, so the listeners are closed
 *    as plain net servers (which also keeps the header and request
 *    timeouts checked during the drain).
 * 4. Each connection closes after its last answer (a download whose headers had gone out
 *    keep-alive is closed once it is complete). A client that stops sending a request partway
 *    (its headers, or its body once the server reads it) is not waited for: after STALLED_MS of
 *    nothing its connection is closed, and so is one whose bytes have not made a request
 *    STALLED_MS into the drain, however they trickle. A body the server holds back (its socket
 *    paused, or `Expect: 100-continue` not yet answered) is not a stall, and neither is a wait
 *    the event loop caused (LATE_CHECK_MS).
 * 5. When the last connection is gone the drain is over: the rest of shutdown runs (the
 *    workspace closes its database, ...) and the process exits 0.
 * 6. The grace period (SVC_SHUTDOWN_GRACE_MS, counted from the signal) bounds the whole drain:
 *    whatever is still open then (a slow download, a request waiting on a stalled upstream) is
 *    cut, the cut is logged, and the process exits 1. A second signal cuts at once.
 *
 * The drain of one process: `createGatewayServer` registers each server (`track`) and each
 * request (`admit`); `start` drains them all; `draining` is what readiness reads.
 */
export class Drain {
  private readonly servers = new Set<http.Server>()
  private readonly sockets = new Map<Socket, ConnectionState>()
  /** Answers in progress (./InFlight.ts: not a Set, whose table churns in the old space). */
  private readonly responses = new InFlight<http.ServerResponse>()
  /** A connection was accepted since the accept phase last looked. */
  private accepted = false
  private running: Promise<DrainOutcome> | undefined
  private cut: ((bySignal: boolean) => void) | undefined
  private startedAt = 0
  private draining_ = false
  private outcome_: DrainOutcome | undefined
  private readonly listeners = new Set<() => void>()
  private stalled = 0
  /** When the last idle check ran (LATE_CHECK_MS). */
  private lastCheck = 0
  /** The look for connections past their `requestlessMs` (`track`), once a server asks for it. */
  private requestlessCheck: ReturnType<typeof setInterval> | undefined

  /** True from the start of the drain on. */
  get draining(): boolean {
    return this.draining_
  }

  /** How the drain ended; undefined until it has. */
  get outcome(): DrainOutcome | undefined {
    return this.outcome_
  }

  /** Open connections and answers in progress, across the tracked servers. */
  get open(): { readonly connections: number; readonly requests: number } {
    return { connections: this.sockets.size, requests: this.responses.size }
  }

  /**
   * Calls `listener` when the drain starts (at once when it has): for what the drain cannot see,
   * e.g. a long-lived stream that should end itself, or a background job that should stop
   * taking work. Returns the unsubscribe.
   */
  onDrain(listener: () => void): () => void {
    if (this.draining_) {
      listener()
      return () => {}
    }
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
    }
  }

  /**
   * Registers a server: its connections are counted, closed and, past the grace period, cut.
   *
   * `requestlessMs`: a connection of it with no answer in progress that has not begun a request
   * for this long since its last answer is closed, drain or not. Node's keep-alive timeout
   * counts from the last byte read, and its header timeout from the first byte of a request
   * line, so a client that sent an empty line (which HTTP/1.1 lets precede a request) every
   * second held a kept-alive connection forever with no request: measured, 40 s and counting,
   * where silent connections are closed after 2 s. Set it past the keep-alive and header
   * timeouts together, so that it only ends what those two would have let through.
   */
  track(server: http.Server, requestlessMs = Number.POSITIVE_INFINITY): void {
    this.servers.add(server)
    server.on("connection", (socket: Socket) => {
      this.accepted = true
      this.sockets.set(socket, {
        active: 0, idleSince: performance.now(), bytesAtIdle: 0, bytesAtStall: -1, stallSince: 0, discarding: false, last: undefined,
        requestlessMs
      })
      socket.once("close", () => this.sockets.delete(socket))
    })
    if (requestlessMs !== Number.POSITIVE_INFINITY && this.requestlessCheck === undefined) {
      this.requestlessCheck = setInterval(() => this.closeRequestless(), REQUESTLESS_CHECK_MS)
      this.requestlessCheck.unref()
    }
  }

  private closeRequestless(): void {
    // A drain closes idle connections sooner, and a drained process has none to look at.
    if (this.draining_) {
      clearInterval(this.requestlessCheck)
      return
    }
    const now = performance.now()
    for (const [socket, state] of this.sockets) {
      if (state.active === 0 && now - state.idleSince >= state.requestlessMs && !socket.destroyed) {
        socket.destroy()
      }
    }
  }

  /** Registers a request as it arrives (before anything answers it). */
  admit(res: http.ServerResponse): void {
    const removeResponse = this.responses.add(res)
    const socket = res.req?.socket as Socket | undefined
    const state = socket === undefined ? undefined : this.sockets.get(socket)
    if (state !== undefined) {
      state.active++
      state.last = res
    }
    // `on`, not `once`: a response closes once, and `once` wraps every listener.
    res.on("close", () => {
      removeResponse()
      if (state !== undefined && --state.active === 0) {
        state.idleSince = performance.now()
        state.bytesAtIdle = socket!.bytesRead
        const req = res.req
        if (req !== undefined && !req.complete && !socket!.destroyed) {
          state.discarding = true
          const done = () => {
            state.discarding = false
            state.bytesAtIdle = socket!.bytesRead
          }
          req.once("end", done)
          req.once("close", done)
        }
      }
    })
    if (this.draining_) this.closeAfter(res)
  }

  /**
   * Starts the drain (once; later calls return the same outcome). `graceMs` bounds it, from
   * now; past it the connections still open are destroyed.
   */
  start(graceMs: number): Promise<DrainOutcome> {
    if (this.running !== undefined) return this.running
    this.draining_ = true
    this.startedAt = performance.now()
    for (const res of this.responses.values()) this.closeAfter(res)
    for (const listener of this.listeners) {
      try {
        listener()
      } catch {
        // A listener's failure is its own; the drain goes on.
      }
    }
    this.listeners.clear()
    this.running = new Promise<DrainOutcome>((resolve) => {
      let cutRequests = 0
      let cutConnections = 0
      let done = false
      /** Set by the first cut (the grace period's or a second signal's); a later one changes nothing. */
      let cutBySignal: boolean | undefined
      const finish = () => {
        if (done) return
        done = true
        clearTimeout(timer)
        clearInterval(idleCheck)
        const cutAny = cutConnections > 0 || cutRequests > 0
        this.outcome_ = {
          cut: cutAny,
          bySignal: cutAny && cutBySignal === true,
          elapsedMs: Math.round(performance.now() - this.startedAt),
          cutRequests,
          cutConnections,
          stalled: this.stalled
        }
        resolve(this.outcome_)
      }
      this.cut = (bySignal) => {
        if (done || cutBySignal !== undefined) return
        cutBySignal = bySignal
        cutRequests = this.responses.values().filter((res) => !res.writableFinished).length
        cutConnections = this.sockets.size
        for (const server of this.servers) server.closeAllConnections()
        for (const socket of this.sockets.keys()) socket.destroy()
        // The servers' close callbacks follow once Node has seen every socket close.
        if (this.sockets.size === 0) finish()
      }
      const timer = setTimeout(() => this.cut?.(false), graceMs)
      let idleCheck: ReturnType<typeof setInterval> | undefined
      const linger = Math.min(IDLE_LINGER_MS, graceMs / 4)
      const closeListeners = () => {
        let open = this.servers.size
        if (open === 0) return finish()
        for (const server of this.servers) {
          // Stops accepting; the callback comes when the last of its connections has closed.
          // net's close, not http's: http's closes the idle connections at once (see above).
          net.Server.prototype.close.call(server, () => {
            if (--open === 0) finish()
          })
        }
        // From the next turn on: the connections accepted last have their request bytes read.
        this.lastCheck = performance.now()
        setImmediate(() => this.closeIdle(linger))
        idleCheck = setInterval(() => this.closeIdle(linger), IDLE_CHECK_MS)
      }
      // The signal is handled at the end of a turn; connections still queued are accepted one
      // per turn. Close once a whole turn accepted nothing (at least the next turn). Bounded,
      // as connections may keep coming: by turns, and by time (a busy turn can take long).
      const acceptUntil = this.startedAt + graceMs / 2
      let turns = 0
      this.accepted = false
      const acceptPhase = () => {
        const busy = this.accepted
        this.accepted = false
        turns++
        if ((busy || turns < 2) && turns < ACCEPT_PHASE_MAX_TURNS && performance.now() < acceptUntil) {
          setImmediate(acceptPhase)
        } else closeListeners()
      }
      setImmediate(acceptPhase)
    })
    return this.running
  }

  /**
   * Closes the connections idle for at least `lingerMs`: no answer in progress and not a byte
   * read since the last one went out (or since it was accepted). A connection on which a request
   * is arriving or being answered is left to close after its answer (`Connection: close`), unless
   * its client stopped sending that request partway (STALLED_MS).
   */
  private closeIdle(lingerMs: number): void {
    const now = performance.now()
    const late = now - this.lastCheck > LATE_CHECK_MS
    this.lastCheck = now
    for (const [socket, state] of this.sockets) {
      if (late) {
        // Bytes may be waiting unread: judge nothing on this check.
        if (state.bytesAtStall !== -1) {
          state.bytesAtStall = socket.bytesRead
          state.stallSince = now
        }
        continue
      }
      // The rest of an answered request's body: thrown away, so the connection is idle (a client
      // that goes on sending it is closed after the linger, as one whose body was refused).
      if (state.active === 0 && state.discarding) state.bytesAtIdle = socket.bytesRead
      if (state.active === 0 && socket.bytesRead === state.bytesAtIdle) {
        state.bytesAtStall = -1
        if (now - state.idleSince >= lingerMs) socket.destroy()
        continue
      }
      if (!this.partwayIn(socket, state)) {
        state.bytesAtStall = -1
      } else if (state.active === 0 && now - Math.max(state.idleSince, this.startedAt) >= STALLED_MS) {
        // Bytes since its last answer and still no request after STALLED_MS of the drain: empty
        // lines begin none (HTTP/1.1 lets them precede one) and start no header timer, so one
        // every second was progress forever and held the drain for the whole grace period, exit
        // 1. A request's headers come in a write or two; once they are in, it is admitted.
        this.stalled++
        socket.destroy()
      } else if (state.bytesAtStall !== socket.bytesRead) {
        state.bytesAtStall = socket.bytesRead
        state.stallSince = now
      } else if (now - state.stallSince >= STALLED_MS) {
        this.stalled++
        socket.destroy()
      }
    }
  }

  /**
   * Whether the connection's client is in the middle of sending a request the server waits for:
   * its headers (bytes came since the last answer and no request is admitted yet), or the body of
   * its one request, which the server is reading. Not when an answer is under way on it, nor
   * when the server holds the body back: its socket paused (the reader is full, or the body
   * budget holds it), or `Expect: 100-continue` not yet answered.
   */
  private partwayIn(socket: Socket, state: ConnectionState): boolean {
    if (state.active === 0) return true
    const res = state.last
    const req = res?.req
    if (state.active > 1 || req === undefined || req.complete || res!.headersSent || socket.isPaused()) return false
    return !(waitsForContinue(req) && (res as { _sent100?: boolean })._sent100 !== true)
  }

  /** Cuts what is open now (a second signal); the drain ends as soon as Node has closed it. */
  cutNow(): void {
    this.cut?.(true)
  }

  /**
   * Makes `res` the last answer on its connection: `Connection: close` when its headers are
   * still to be sent; when they went out keep-alive already (a download in progress), the
   * connection is closed once the answer is complete and it has been idle for the linger.
   */
  private closeAfter(res: http.ServerResponse): void {
    if (!res.headersSent) {
      // Decided as its headers go out: a pipelined request already read after it on the same
      // connection (Node answers them in order) is answered too, and that one closes it.
      const socket = res.req?.socket as Socket | undefined
      const writeHead = res.writeHead
      const drain = this
      res.writeHead = function(this: http.ServerResponse, ...args: Array<any>) {
        const state = socket === undefined ? undefined : drain.sockets.get(socket)
        if (state === undefined || state.last === res) this.shouldKeepAlive = false
        return (writeHead as (...a: Array<any>) => http.ServerResponse).apply(this, args)
      } as typeof res.writeHead
      return
    }
    // Past its end the connection is idle, and closed by the drain's idle check.
  }
}

const count = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`

/**
 * Whether Node holds the request's body for a `100 Continue` (its own rule, _http_server.js: an
 * HTTP/1.1 request whose Expect names 100-continue anywhere, a repeated header included); an
 * HTTP/1.0 client is never sent one, so its body is read like any other.
 */
const waitsForContinue = (req: http.IncomingMessage): boolean => {
  const expect = req.headers.expect
  return req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && typeof expect === "string" &&
    /(?:^|\W)100-continue(?:$|\W)/i.test(expect)
}

/** What the drain will wait for, as its first log line says it. */
export const describeInProgress = (open: { readonly connections: number; readonly requests: number }): string =>
  open.requests > 0
    ? `answering the ${count(open.requests, "request")} in progress (${count(open.connections, "connection")} open)`
    : open.connections > 0
    ? `nothing in progress; ${count(open.connections, "idle connection")} to close`
    : "nothing in progress"

/**
 * Drains on SIGTERM and SIGINT. Call it inside the scope that holds the servers, after they
 * are built: the drain starts the moment a signal arrives (readiness turns, the listeners
 * close), and a finalizer holds the scope until the drain is over, so the servers' handlers
 * and the workspace stay up while the last answers go out. (NodeRuntime.runMain interrupts
 * the main fiber on the same signal; that closes the scope, this finalizer first.)
 *
 * A second signal cuts what is still open. After the drain, the rest of the shutdown has
 * SHUTDOWN_BACKSTOP_MS before the process exits 1 regardless.
 */
export const drainOnSignals = (
  drain: Drain,
  graceMs: number,
  /** True while the start is still in progress (launchDrained). */
  starting: () => boolean = () => false
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<never>()
    const runFork = Effect.runForkWith(context)
    const runSync = Effect.runSyncWith(context)
    let signals = 0
    const onSignal = (signal: NodeJS.Signals) => {
      if (++signals === 1) {
        // A start waiting on something that ignores interruption (a database connection being
        // opened, bounded only by SVC_DB_CONNECT_TIMEOUT_MS) would hold the stop past the grace.
        if (starting()) {
          setTimeout(() => {
            runSync(Effect.logError(
              `shutdown: ${signal} came during the start, which did not stop within the grace period of ${graceMs} ms ` +
                "(SVC_SHUTDOWN_GRACE_MS); exiting (code 1)"
            ))
            process.exit(1)
          }, graceMs).unref()
        }
        runFork(Effect.logInfo(
          `${signal} received: draining (not ready, no new connections, ${describeInProgress(drain.open)}; ` +
            `grace period ${graceMs} ms, SVC_SHUTDOWN_GRACE_MS)`
        ))
        void drain.start(graceMs)
      } else {
        runFork(Effect.logWarning(`${signal} received again: cutting the connections still open`))
        drain.cutNow()
      }
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        process.on("SIGTERM", onSignal)
        process.on("SIGINT", onSignal)
      }),
      () =>
        Effect.sync(() => {
          process.off("SIGTERM", onSignal)
          process.off("SIGINT", onSignal)
        })
    )
    yield* Effect.addFinalizer((exit) =>
      Effect.gen(function*() {
        // A start that failed (port in use, bad settings) has nothing to drain: what it opened
        // is closed by its own finalizers.
        if (!drain.draining && Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause)) return
        const outcome = yield* Effect.promise(() => drain.start(graceMs))
        const stalled = outcome.stalled > 0
          ? `; closed ${count(outcome.stalled, "connection")} on which a request stopped arriving partway (nothing for ${STALLED_MS} ms)`
          : ""
        if (outcome.cut) {
          yield* Effect.logWarning(
            (outcome.bySignal
              ? `shutdown: a second signal cut the drain ${outcome.elapsedMs} ms in; cut `
              : `shutdown: the grace period of ${graceMs} ms (SVC_SHUTDOWN_GRACE_MS) ran out; cut `) +
              `${outcome.cutRequests} request(s) in progress and ${outcome.cutConnections} connection(s)${stalled}; exit code 1`
          )
        } else {
          yield* Effect.logInfo(`shutdown: drained in ${outcome.elapsedMs} ms${stalled}`)
        }
        setTimeout(() => {
          runSync(Effect.logError(`shutdown: still not done ${SHUTDOWN_BACKSTOP_MS} ms after the drain; exiting (code 1)`))
          process.exit(1)
        }, SHUTDOWN_BACKSTOP_MS).unref()
      })
    )
  })

/**
 * Layer.launch with a drain: builds `layer` (with SIGTERM/SIGINT already draining, so a signal
 * during start-up drains too), runs `onStart` with what it built, and serves until a signal.
 * Then the drain runs first, and only after it the layer is released (handlers, servers,
 * workspace, in that order). Run it with `NodeRuntime.runMain(..., { teardown: drainTeardown(drain) })`.
 */
export const launchDrained = <ROut, E, RIn, E2 = never, R2 = never>(
  layer: Layer.Layer<ROut, E, RIn>,
  options: {
    readonly drain: Drain
    readonly graceMs: number
    readonly onStart?: (context: Context.Context<ROut>) => Effect.Effect<void, E2, R2 | Scope.Scope>
  }
): Effect.Effect<never, E | E2, RIn | Exclude<R2, Scope.Scope>> =>
  Effect.scoped(
    Effect.gen(function*() {
      // The layer's scope is closed after the drain's finalizer (finalizers run last-added first).
      const layerScope = yield* Scope.fork(yield* Effect.scope, "sequential")
      let started = false
      yield* drainOnSignals(options.drain, options.graceMs, () => !started)
      const context = yield* Layer.buildWithScope(layer, layerScope)
      started = true
      if (options.onStart !== undefined) yield* options.onStart(context)
      return yield* Effect.never
    })
  )

/**
 * NodeRuntime.runMain's teardown, with the drain's verdict: after a drain, 0 when it was clean
 * and 1 when it had to cut requests or connections (Effect 4's runtime says 130 for the
 * interruption a signal causes); the runtime's code otherwise.
 */
export const drainTeardown = (drain: Drain): Runtime.Teardown => (exit, onExit) =>
  Runtime.defaultTeardown(exit, (code) => {
    const drained = drain.outcome !== undefined && Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)
    if (drained || code === 0) return onExit(drain.outcome?.cut === true ? 1 : 0)
    onExit(code)
  })
