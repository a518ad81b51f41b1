/**
 * A start-up failure (bad settings or fixture, a port in use, a host that does not resolve): the
 * reason logged in words an operator can act on, exit code 1, no stack.
 *
 * - A setting: its name, the value it has (secrets by length only) and what was expected, e.g.
 *   `SVC_MAX_BODY_BYTES="abc": expected an integer from 1 to 535822336`. Every bad setting is listed.
 * - A listener: `port 3000 on 127.0.0.1 is already in use (PORT, HOST)`, `HOST="db.invalid"
 *   does not resolve to an address (ENOTFOUND)`, ... naming the settings to change.
 * - Anything else: its message.
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import type * as Runtime from "effect/Runtime"
import { describeConfigError } from "../../config/settingErrors.js"

const isConfigError = (u: unknown): u is Config.ConfigError => u instanceof Config.ConfigError

interface ListenErrorCause {
  readonly code?: unknown
  readonly syscall?: unknown
  readonly hostname?: unknown
  readonly address?: unknown
  readonly port?: unknown
  readonly message?: unknown
}

/** Which settings name a listener's address, for the messages below. */
export interface ListenerSettings {
  readonly host: string
  readonly port: number
  readonly hostSetting: string
  readonly portSetting: string
}

const GATEWAY_LISTENER = { hostSetting: "HOST", portSetting: "PORT" }

/**
 * Why a listener could not open, naming the settings to change; undefined for a failure that is
 * not a socket error. `cause` is Node's error (a ServeError's cause).
 */
export const describeListenError = (cause: unknown, settings: Partial<ListenerSettings> = {}): string | undefined => {
  if (cause === null || typeof cause !== "object") return undefined
  const c = cause as ListenErrorCause
  if (typeof c.code !== "string") return undefined
  const hostSetting = settings.hostSetting ?? GATEWAY_LISTENER.hostSetting
  const portSetting = settings.portSetting ?? GATEWAY_LISTENER.portSetting
  const host = typeof c.address === "string" ? c.address : typeof c.hostname === "string" ? c.hostname : settings.host ?? "?"
  const port = typeof c.port === "number" ? c.port : settings.port ?? "?"
  const where = `port ${port} on ${host}`
  switch (c.code) {
    case "EADDRINUSE":
      return `${where} is already in use (${portSetting}, ${hostSetting}): stop what holds it or set ${portSetting} to a free port`
    case "EACCES":
      return `${where} needs privileges this process does not have (${portSetting}): use a port above 1023`
    case "EADDRNOTAVAIL":
      return `${hostSetting}=${JSON.stringify(host)} is not an address of this machine: use one of its addresses, ` +
        `127.0.0.1 or 0.0.0.0 (all)`
    case "ENOTFOUND":
    case "EAI_NONAME":
    case "EAI_AGAIN":
    case "EAI_FAIL":
      return `${hostSetting}=${JSON.stringify(settings.host ?? host)} does not resolve to an address (${c.code}${
        c.code === "EAI_AGAIN" ? ": the name server did not answer" : ""
      }): use an IP address or a host name of this machine`
    default:
      return `cannot listen on ${where} (${hostSetting}, ${portSetting}): ${c.code}${
        typeof c.message === "string" ? ` ${c.message}` : ""
      }`
  }
}

/** The words of a start-up failure (see the module comment). */
export const describeStartFailure = (error: unknown, env: Record<string, string | undefined> = process.env): string => {
  if (isConfigError(error)) {
    const lines = describeConfigError(error, env)
    return lines.length === 1 ? lines[0]! : `${lines.length} settings are not valid:\n  ${lines.join("\n  ")}`
  }
  if (error !== null && typeof error === "object") {
    const e = error as { _tag?: unknown; cause?: unknown; message?: unknown }
    if (e._tag === "ServeError") {
      const listen = describeListenError(e.cause, { host: env.HOST ?? "127.0.0.1", port: Number(env.PORT ?? 3000) })
      if (listen !== undefined) return listen
      const inner = e.cause as { message?: unknown } | undefined
      return `the HTTP listener did not open: ${String(inner?.message ?? e.message ?? "unknown reason")}`
    }
    if (typeof e.message === "string" && e.message !== "") return e.message
    const listen = describeListenError(error)
    if (listen !== undefined) return listen
  }
  return String(error)
}

/** Set once a start has failed: the process then exits 1, whatever is still open (startFailureTeardown). */
let startFailed = false

/**
 * How long releasing what a failed start opened may take (closing a database pool is bounded
 * at 2 s) before the process exits 1 regardless.
 */
export const START_FAILURE_BACKSTOP_MS = 5_000

/**
 * A start-up failure: the reason as plain text on stderr (in words, whatever SVC_LOG_FORMAT
 * says: it is read by whoever started the process), exit code 1, no stack. Said once: called
 * where the start fails (so the line comes before the release of what it had opened) and again
 * around the whole program.
 */
export const failStart = (error: unknown) =>
  Effect.sync(() => {
    if (startFailed) return
    startFailed = true
    process.stderr.write(`Cannot start: ${describeStartFailure(error)}\n`)
    process.exitCode = 1
    setTimeout(() => process.exit(1), START_FAILURE_BACKSTOP_MS).unref()
  })

/**
 * NodeRuntime.runMain's teardown, for a program that ends with failStart: after a failed start
 * the process exits 1 at once. A clean exit of the main fiber would otherwise wait for the event
 * loop to empty, and a socket the failed start left behind (on PostgreSQL, the LISTEN
 * connection still being opened as the port turned out taken) kept a process serving nothing
 * alive for good.
 */
export const startFailureTeardown = (teardown: Runtime.Teardown): Runtime.Teardown => (exit, onExit) =>
  teardown(exit, (code) => onExit(code === 0 && startFailed ? 1 : code))
