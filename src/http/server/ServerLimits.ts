/**
 * Limits of the HTTP server itself, settings with safe defaults (declared in
 * src/config/settings.ts) instead of Node's, which (60 s for headers, 300 s for a whole request,
 * 2,000 headers, no connection cap) let a handful of slow or stalled clients hold connections
 * for minutes. Why each default:
 * - header timeout 10 s: real clients send headers in milliseconds; cuts a slowloris client 6x
 *   sooner than Node's 60 s. Request timeout 60 s: a stalled body cut after 1 min, not 5 (32 MiB
 *   in 60 s needs about 0.55 MB/s). First byte 2 s: silent sockets cannot fill the connection cap.
 * - 100 headers: browsers and proxies send 10-30 (Node silently drops past 2,000). 1,024
 *   connections, 256 per client address: one process serves one tenant; the caps bound sockets,
 *   buffers and file descriptors, and one client cannot take them all.
 * - 128 MiB of bodies in flight: a body costs about 3x its size while held (buffer, text, parsed
 *   value); a quarter per client; bodies slower than 16 KiB/s over 5 s give back their share.
 * - 10 s shutdown grace: below Kubernetes' default terminationGracePeriodSeconds (30 s), with
 *   room for a preStop delay.
 * A bad value stops the start naming the variable, the value and what was expected; of the two
 * timeouts, one left unset follows the one set.
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { ClientAddressSettings } from "./clientAddress.js"
import { invalidSetting } from "../../config/settingErrors.js"
import { quoted } from "../../lib/quoted.js"
import { defaultOf, setting, type SettingName } from "../../config/settings.js"

export interface ServerLimits {
  /** Time to receive the complete request headers; past it Node answers 408 and closes. */
  readonly headersTimeoutMs: number
  /** Time to receive the complete request (headers and body); past it 408 and close. */
  readonly requestTimeoutMs: number
  /** How long an idle keep-alive connection is kept open. */
  readonly keepAliveTimeoutMs: number
  /** Request headers allowed; more answer 431. */
  readonly maxHeaders: number
  /** Open connections allowed; a connection past the cap is closed as soon as it is accepted. */
  readonly maxConnections: number
  /** Open connections allowed from one client address (an IPv6 /64); past it, closed at once. */
  readonly maxConnectionsPerClient: number
  /** Request body bytes held at once, across requests (declared lengths reserved up front). */
  readonly maxBodyBytesInFlight: number
  /** How long a request waits for room in `maxBodyBytesInFlight` before its 503. */
  readonly bodyBudgetWaitMs: number
  /** What one client may hold of `maxBodyBytesInFlight` (its first body is always let in). */
  readonly maxBodyBytesPerClient: number
  /** A large body arriving slower than this (bytes per second, over 5 s) is cut; 0: never. */
  readonly minBodyBytesPerSecond: number
  /** A connection that sends no byte for this long after it opened is closed. */
  readonly firstByteTimeoutMs: number
  /** After requests, no request for this long: one memory-reducing collection (`collectWhenProcessIdle`). */
  readonly idleCollectMs: number
  /** Which address a request counts against (the trusted proxy header, when set). */
  readonly clientAddress: ClientAddressSettings
  /**
   * Paths answered on the connections reserved past `maxConnections` (PROBE_RESERVE of them), so
   * that liveness and readiness probes are answered while the cap is full; empty: no reserve.
   */
  readonly probePaths: ReadonlyArray<string>
  /** Long-lived answers one client may hold at once (the event streams): 503 past `perClient`. */
  readonly streams: { readonly path: RegExp; readonly perClient: number } | undefined
  /**
   * POST paths (as the router reads them) whose body the application streams to disk as it
   * arrives (the raw upload): capped like any body, but held in memory a chunk at a time, so it
   * takes nothing of the body budget.
   */
  readonly streamedBodies?: RegExp | undefined
}

export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  headersTimeoutMs: defaultOf("SVC_HEADERS_TIMEOUT_MS"),
  requestTimeoutMs: defaultOf("SVC_REQUEST_TIMEOUT_MS"),
  keepAliveTimeoutMs: defaultOf("SVC_KEEP_ALIVE_TIMEOUT_MS"),
  maxHeaders: defaultOf("SVC_MAX_HEADERS"),
  maxConnections: defaultOf("SVC_MAX_CONNECTIONS"),
  maxConnectionsPerClient: defaultOf("SVC_MAX_CONNECTIONS_PER_CLIENT"),
  maxBodyBytesInFlight: defaultOf("SVC_MAX_BODY_BYTES_IN_FLIGHT"),
  bodyBudgetWaitMs: defaultOf("SVC_BODY_BUDGET_WAIT_MS"),
  // Unset, a quarter of the budget (serverLimitsConfig); as a value, that of the default budget.
  maxBodyBytesPerClient: Math.floor(defaultOf("SVC_MAX_BODY_BYTES_IN_FLIGHT") / 4),
  minBodyBytesPerSecond: defaultOf("SVC_MIN_BODY_BYTES_PER_SECOND"),
  firstByteTimeoutMs: defaultOf("SVC_FIRST_BYTE_TIMEOUT_MS"),
  idleCollectMs: defaultOf("SVC_IDLE_COLLECT_MS"),
  clientAddress: { header: undefined, hops: 1 },
  probePaths: [],
  streams: undefined
}

/** Connections past SVC_MAX_CONNECTIONS kept for probes (ServerLimits.probePaths). */
export const PROBE_RESERVE = 16

/**
 * Connections the kernel queues before they are accepted. Node's default (511) overflows under a
 * burst of 1,100 connects (9-113 listen overflows per run of the flood test), and a probe's
 * connection among the dropped ones waits 1-3 s for the handshake's retransmission. Linux caps it
 * at net.core.somaxconn (4096 by default since 5.4).
 */
export const LISTEN_BACKLOG = 4096

/** RFC 9110 token: a header name. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/

/** SVC_CLIENT_ADDRESS_HEADER and SVC_TRUSTED_PROXY_HOPS (also read by src/mcp/McpConfig.ts). */
export const clientAddressConfig: Config.Config<ClientAddressSettings> = Config.all({
  header: Config.option(Config.String("SVC_CLIENT_ADDRESS_HEADER")),
  hops: Config.option(Config.String("SVC_TRUSTED_PROXY_HOPS"))
}).pipe(
  Config.mapEffect(({ header, hops }) => {
    const name = Option.getOrElse(header, () => "").trim().toLowerCase()
    if (name !== "" && !HEADER_NAME.test(name)) {
      return Effect.fail(invalidSetting(`SVC_CLIENT_ADDRESS_HEADER must be an HTTP header name (e.g. x-forwarded-for), or empty`))
    }
    const hopsText = Option.getOrElse(hops, () => "1").trim()
    const n = /^\d{1,4}$/.test(hopsText) ? Number(hopsText) : NaN
    if (!(n >= 1)) return Effect.fail(invalidSetting(`SVC_TRUSTED_PROXY_HOPS must be a positive integer`))
    return Effect.succeed<ClientAddressSettings>({ header: name === "" ? undefined : name, hops: n })
  })
)

/** A whole number setting as the operator gave it, within its declared bounds: None when unset. */
const setWholeNumber = (name: SettingName, unit: string, fallback: number = defaultOf(name)) => {
  const { max = Number.MAX_SAFE_INTEGER, min = 0 } = setting(name)
  return Config.option(Config.String(name)).pipe(
    Config.mapEffect((raw) => {
      if (Option.isNone(raw)) return Effect.succeed(Option.none<number>())
      const text = raw.value.trim()
      const n = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN
      return Number.isSafeInteger(n) && n >= min && n <= max
        ? Effect.succeed(Option.some(n))
        : Effect.fail(
          invalidSetting(
            `${name}=${quoted(raw.value)} is not valid: ` +
              `expected a whole number of ${unit} from ${min} to ${max} (default ${fallback})`
          )
        )
    })
  )
}

const wholeNumber = (name: SettingName, unit: string) =>
  setWholeNumber(name, unit).pipe(Config.map(Option.getOrElse(() => defaultOf(name))))

/** The server limits from the environment (SVC_HEADERS_TIMEOUT_MS, ...), defaults where unset. */
export const serverLimitsConfig: Config.Config<ServerLimits> = Config.all({
  headersTimeoutMs: setWholeNumber("SVC_HEADERS_TIMEOUT_MS", "milliseconds"),
  requestTimeoutMs: setWholeNumber("SVC_REQUEST_TIMEOUT_MS", "milliseconds"),
  keepAliveTimeoutMs: wholeNumber("SVC_KEEP_ALIVE_TIMEOUT_MS", "milliseconds"),
  maxHeaders: wholeNumber("SVC_MAX_HEADERS", "headers"),
  maxConnections: wholeNumber("SVC_MAX_CONNECTIONS", "connections"),
  maxConnectionsPerClient: wholeNumber("SVC_MAX_CONNECTIONS_PER_CLIENT", "connections"),
  maxBodyBytesInFlight: wholeNumber("SVC_MAX_BODY_BYTES_IN_FLIGHT", "bytes"),
  bodyBudgetWaitMs: wholeNumber("SVC_BODY_BUDGET_WAIT_MS", "milliseconds"),
  maxBodyBytesPerClient: setWholeNumber("SVC_MAX_BODY_BYTES_PER_CLIENT", "bytes", DEFAULT_SERVER_LIMITS.maxBodyBytesPerClient),
  minBodyBytesPerSecond: wholeNumber("SVC_MIN_BODY_BYTES_PER_SECOND", "bytes per second"),
  firstByteTimeoutMs: setWholeNumber("SVC_FIRST_BYTE_TIMEOUT_MS", "milliseconds"),
  idleCollectMs: wholeNumber("SVC_IDLE_COLLECT_MS", "milliseconds"),
  clientAddress: clientAddressConfig
}).pipe(
  Config.mapEffect(({ firstByteTimeoutMs, headersTimeoutMs, maxBodyBytesPerClient, requestTimeoutMs, ...rest }) => {
    // Node refuses a header timeout above the request timeout (the request includes the
    // headers). The one the operator left unset follows the one they set; only two values set
    // against each other are refused.
    if (Option.isSome(headersTimeoutMs) && Option.isSome(requestTimeoutMs) && headersTimeoutMs.value > requestTimeoutMs.value) {
      return Effect.fail(
        invalidSetting(
          `SVC_HEADERS_TIMEOUT_MS=${headersTimeoutMs.value} is not valid: expected at most ` +
            `SVC_REQUEST_TIMEOUT_MS (${requestTimeoutMs.value}), since the request includes its headers`
        )
      )
    }
    const request = Option.getOrElse(
      requestTimeoutMs,
      () => Math.max(DEFAULT_SERVER_LIMITS.requestTimeoutMs, Option.getOrElse(headersTimeoutMs, () => 0))
    )
    const headers = Option.getOrElse(headersTimeoutMs, () => Math.min(DEFAULT_SERVER_LIMITS.headersTimeoutMs, request))
    // Unset, it follows the header timeout down (it is the first part of it); set, it may not exceed it.
    if (Option.isSome(firstByteTimeoutMs) && firstByteTimeoutMs.value > headers) {
      return Effect.fail(
        invalidSetting(
          `SVC_FIRST_BYTE_TIMEOUT_MS=${firstByteTimeoutMs.value} is not valid: expected at most the header timeout ` +
            `(${headers} ms, SVC_HEADERS_TIMEOUT_MS), since the first byte is part of the headers`
        )
      )
    }
    const firstByte = Option.getOrElse(firstByteTimeoutMs, () => Math.min(DEFAULT_SERVER_LIMITS.firstByteTimeoutMs, headers))
    const perClient = Option.getOrElse(maxBodyBytesPerClient, () => Math.max(1, Math.floor(rest.maxBodyBytesInFlight / 4)))
    return Effect.succeed<ServerLimits>({
      ...rest,
      headersTimeoutMs: headers,
      requestTimeoutMs: request,
      firstByteTimeoutMs: firstByte,
      maxBodyBytesPerClient: perClient,
      probePaths: DEFAULT_SERVER_LIMITS.probePaths,
      streams: DEFAULT_SERVER_LIMITS.streams
    })
  })
)

/** The drain's grace period by default (SVC_SHUTDOWN_GRACE_MS). */
export const DEFAULT_SHUTDOWN_GRACE_MS = defaultOf("SVC_SHUTDOWN_GRACE_MS")

/**
 * SVC_SHUTDOWN_GRACE_MS: the bound of the drain on SIGTERM/SIGINT, from the signal (0 cuts
 * what is open at once). Apart from ServerLimits: it bounds the process's shutdown, not a server.
 */
export const shutdownGraceConfig: Config.Config<number> = wholeNumber("SVC_SHUTDOWN_GRACE_MS", "milliseconds")

/**
 * The longest path parameter the router matches. find-my-way answers a longer one as if no
 * route existed (its default is 100 characters, shorter than a nested composite task id).
 * It is set above every path schema's own maximum (TaskId: 2,048) so that those schemas
 * answer an over-long id with a 400 naming the parameter; a parameter past even this limit is
 * answered 400 by the error path (errorResponse.ts). Request lines are bounded anyway by
 * Node's header size limit (16 KiB: 431 above it).
 */
export const MAX_PATH_PARAM_LENGTH = 4096

/** The router settings every HttpApi router of this service is built with. */
export const routerConfig = { maxParamLength: MAX_PATH_PARAM_LENGTH } as const

/**
 * As a Layer: provide it to the layer that builds the router (`HttpRouter.layer`, or what
 * `HttpRouter.serve` builds), it sets the reference the router reads when it is made.
 */
export const RouterConfigLive: Layer.Layer<never> = Layer.succeed(HttpRouter.RouterConfig, routerConfig) as Layer.Layer<never>

/** As a wrapper for an effect that builds a router (e.g. `HttpRouter.toHttpEffect`). */
export const withRouterConfig = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(self, HttpRouter.RouterConfig, routerConfig)
