/**
 * The admin surface: the whole multi-tenant WorkspaceApi (tenants, tasks, documents, records,
 * GL, agent registry, webhook, its OpenAPI document and docs page). It is never served on the
 * gateway's port; in embedded mode it gets a listener of its own, and `npm run workspace`
 * serves it as a process of its own.
 *
 * Settings (Effect Config, read at start; a bad value stops the start with a message naming it):
 * - SVC_ADMIN_HOST: where the embedded admin listener binds; default 127.0.0.1 (loopback).
 * - SVC_ADMIN_PORT: its port, default the gateway's PORT + 1 (3001 with the default PORT);
 *   `0` picks a free port (the start-up log names it); `off` runs no admin listener.
 * - SVC_ADMIN_TOKEN: when set, every admin request (docs and OpenAPI included, unknown paths
 *   too) needs `Authorization: Bearer <token>`, else 401. At least 16 visible ASCII characters.
 *   A listener on a non-loopback address refuses to start without it.
 * - SVC_WORKSPACE_TOKEN: what a gateway with SVC_WORKSPACE_URL sends as its bearer token to
 *   that workspace service (whose own SVC_ADMIN_TOKEN it must equal).
 */
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import { isIPv4, isIPv6 } from "node:net"
import { errorResponse } from "../../http/errors/errorBody.js"
import { bearerCredential } from "../../http/input/bearerCredential.js"
import { secretMatcher } from "../../lib/secretMatcher.js"
import { defaultTextOf } from "../../config/settings.js"

export const DEFAULT_ADMIN_HOST = defaultTextOf("SVC_ADMIN_HOST")
export const DEFAULT_ADMIN_PORT = 3001
export const MIN_TOKEN_LENGTH = 16

export interface AdminListen {
  readonly host: string
  /** 0: a free port chosen at start. */
  readonly port: number
}

export interface AdminSettings {
  /** None when SVC_ADMIN_PORT=off: no admin listener. */
  readonly listen: Option.Option<AdminListen>
  /** None: no token required (only allowed on a loopback address). */
  readonly token: Option.Option<Redacted.Redacted<string>>
}

/** A setting refused with `message` (which names the setting: Effect 4's ConfigError carries no path of ours). */
const configError = (message: string) => new Config.ConfigError(new ConfigProvider.SourceError({ message }))

const invalid = (_name: string, message: string) => Result.fail(configError(message))

/** A check of a read setting, as a Config step. */
const check = <A, B>(f: (a: A) => Result.Result<B, Config.ConfigError>) => Config.mapEffect((a: A) => Effect.fromResult(f(a)))

/** An app answering every request (Effect 4 has no HttpApp module: an effect of the request's response). */
type App<E, R> = Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest>

/** Loopback: 127.0.0.0/8, ::1 (bracketed or not), IPv4-mapped loopback, `localhost`. */
export const isLoopback = (host: string): boolean => {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1")
  if (h === "localhost" || h.endsWith(".localhost")) return true
  if (isIPv4(h)) return h.startsWith("127.")
  if (isIPv6(h)) return h === "::1" || h === "0:0:0:0:0:0:0:1" || /^::ffff:127\./.test(h)
  return false
}

/** A bearer token setting: unset is None; set, it must be at least 16 visible ASCII characters. */
export const tokenSetting = (name: string): Config.Config<Option.Option<Redacted.Redacted<string>>> =>
  Config.option(
    Config.Redacted(name).pipe(
      check((token: Redacted.Redacted<string>) => {
        const value = Redacted.value(token)
        if (value === "") return invalid(name, `${name} is set but empty: unset it to require no token, or give a token`)
        if (!/^[\x21-\x7e]*$/.test(value)) {
          return invalid(name, `${name} must be visible ASCII characters only (no spaces or control characters)`)
        }
        if (value.length < MIN_TOKEN_LENGTH) {
          return invalid(name, `${name} must be at least ${MIN_TOKEN_LENGTH} characters long (unset it to require no token)`)
        }
        return Result.succeed(token)
      })
    )
  )

/**
 * SVC_ADMIN_PORT unset: the gateway's PORT + 1 (3001 beside the default 3000; PORT=0, a free
 * port, gives a free port too). Replicas on one host, each with its own PORT, thus get admin
 * listeners of their own instead of all reaching for 3001 (README "Scaling out").
 */
const adminPort: Config.Config<Option.Option<number>> = Config.all([
  Config.option(Config.String("SVC_ADMIN_PORT")),
  Config.option(Config.Port("PORT"))
]).pipe(
  check(([raw, gatewayPort]: readonly [Option.Option<string>, Option.Option<number>]) => {
    if (Option.isNone(raw)) {
      const port = Option.match(gatewayPort, { onNone: () => DEFAULT_ADMIN_PORT, onSome: (p) => (p === 0 ? 0 : p + 1) })
      return port <= 65535
        ? Result.succeed(Option.some(port))
        : invalid(
          "SVC_ADMIN_PORT",
          `SVC_ADMIN_PORT is not set and PORT=65535 leaves no PORT + 1 for the admin listener: set SVC_ADMIN_PORT (or "off")`
        )
    }
    const text = raw.value.trim()
    if (text.toLowerCase() === "off") return Result.succeed(Option.none())
    const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN
    return port >= 0 && port <= 65535
      ? Result.succeed(Option.some(port))
      : invalid(
        "SVC_ADMIN_PORT",
        `SVC_ADMIN_PORT must be a port number (0 for a free port) or "off", got "${raw.value}"`
      )
  })
)

const adminHost = Config.String("SVC_ADMIN_HOST").pipe(
  Config.withDefault(DEFAULT_ADMIN_HOST),
  check((host: string) =>
    host.trim() === "" ? invalid("SVC_ADMIN_HOST", "SVC_ADMIN_HOST must not be empty") : Result.succeed(host.trim())
  )
)

/**
 * Refuses a listener that would serve every tenant's data without a token on a non-loopback
 * address. `what` names the host setting in the message.
 */
export const checkExposure = (
  setting: string,
  host: string,
  token: Option.Option<Redacted.Redacted<string>>
): Result.Result<void, Config.ConfigError> =>
  Option.isNone(token) && !isLoopback(host)
    ? invalid(
      setting,
      `${setting}=${host} is not a loopback address: the admin API reads and writes every tenant's data, so set ` +
        "SVC_ADMIN_TOKEN as well (or keep it on 127.0.0.1)"
    )
    : Result.succeed(undefined)

/** Wildcard addresses: a listener there holds the port on every address of the machine. */
const WILDCARD = new Set(["", "0.0.0.0", "::", "[::]"])

/**
 * SVC_ADMIN_PORT set to the gateway's own PORT, on an address that overlaps HOST's: refused as a
 * setting, since "port in use: stop what holds it" would send the operator after a process that
 * is this one.
 */
const sameListener = (adminHost: string, adminPort: number, gatewayHost: string, gatewayPort: Option.Option<number>) => {
  if (adminPort === 0 || Option.getOrElse(gatewayPort, () => 3000) !== adminPort) return false
  const a = adminHost.trim().toLowerCase()
  const g = gatewayHost.trim().toLowerCase()
  return a === g || WILDCARD.has(a) || WILDCARD.has(g) || (isLoopback(a) && isLoopback(g) && (a === "localhost" || g === "localhost"))
}

/** The embedded gateway's admin listener settings (SVC_ADMIN_PORT unset: PORT + 1). */
export const adminSettings: Config.Config<AdminSettings> = Config.all({
  host: adminHost,
  port: adminPort,
  token: tokenSetting("SVC_ADMIN_TOKEN"),
  gatewayHost: Config.String("HOST").pipe(Config.withDefault(defaultTextOf("HOST"))),
  gatewayPort: Config.option(Config.Port("PORT"))
}).pipe(
  Config.mapEffect(({ gatewayHost, gatewayPort, host, port, token }) => {
    if (Option.isNone(port)) return Effect.succeed<AdminSettings>({ listen: Option.none(), token })
    if (sameListener(host, port.value, gatewayHost, gatewayPort)) {
      return Effect.fail(configError(
        `SVC_ADMIN_PORT=${port.value} is PORT's own port: the admin listener needs a port of its own ` +
          `(unset SVC_ADMIN_PORT for PORT + 1, or set "off" for none)`
      ))
    }
    return Effect.fromResult(Result.map(checkExposure("SVC_ADMIN_HOST", host, token), (): AdminSettings => ({
      listen: Option.some({ host, port: port.value }),
      token
    })))
  })
)

/** The bearer token a gateway sends to the workspace service at SVC_WORKSPACE_URL. */
export const workspaceToken = tokenSetting("SVC_WORKSPACE_TOKEN")

// ---------------------------------------------------------------------------------------------
// The bearer check

/** A constant-time comparison with the expected token (src/lib/secretMatcher.ts). */
export const tokenMatcher = (expected: Redacted.Redacted<string>) => secretMatcher(Redacted.value(expected))

/** An admin token is visible ASCII. */
const VISIBLE_ASCII_TOKEN = /^[\x21-\x7e]+$/

/** The token of an `Authorization: Bearer <token>` header; undefined when absent or another scheme. */
export const bearerTokenOf = (authorization: string | undefined): string | undefined => {
  const credential = bearerCredential(authorization)
  return credential !== undefined && VISIBLE_ASCII_TOKEN.test(credential) ? credential : undefined
}

const REALM = "svc-admin"

const unauthorized = (message: string, challenge: string) =>
  errorResponse(401, "Unauthorized", message, { "www-authenticate": challenge, "cache-control": "no-store" })

/**
 * Wraps an HttpApp so that, when `token` is set, every request must carry it as a bearer token:
 * 401 in the spec's error shape with `WWW-Authenticate: Bearer` otherwise, before routing and
 * before a byte of the body is read. Without a token the app is returned as it is.
 */
export const requireBearer = (token: Option.Option<Redacted.Redacted<string>>) => {
  if (Option.isNone(token)) return <E, R>(app: App<E, R>): App<E, R> => app
  const matches = tokenMatcher(token.value)
  const missing = unauthorized("This admin endpoint needs Authorization: Bearer <SVC_ADMIN_TOKEN>", `Bearer realm="${REALM}"`)
  const wrong = unauthorized(
    "The bearer token is not valid for this admin endpoint",
    `Bearer realm="${REALM}", error="invalid_token"`
  )
  return <E, R>(app: App<E, R>): App<E, R> =>
    Effect.flatMap(Effect.service(HttpServerRequest.HttpServerRequest), (request) => {
      const given = bearerTokenOf(request.headers["authorization"])
      if (given === undefined) return Effect.succeed(missing)
      return matches(given) ? app : Effect.succeed(wrong)
    })
}
