/**
 * Log output: one line per event, JSON when stdout is not a terminal (a log collector reads
 * it), a short readable line on a terminal. Settings:
 *
 * - SVC_LOG_LEVEL: trace, debug, info (default), warning, error, fatal, none. Request lines are
 *   info (5xx: error), so `warning` keeps only failures.
 * - SVC_LOG_FORMAT: auto (default: json unless stdout is a TTY), json, pretty.
 *
 * Lines are buffered and written every 25 ms (or at 64 KiB): under load that is one write for
 * many requests instead of one each (a write to a pipe costs more than formatting the line).
 * The buffer is flushed when the process exits.
 */
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"
import * as References from "effect/References"
import { intSetting } from "../config/read.js"
import { defaultOf, defaultTextOf, setting } from "../config/settings.js"
import { invalidSetting, quoteSetting } from "../config/settingErrors.js"
import { CurrentRequest } from "./requestContext.js"

export type LogFormat = "json" | "pretty"

export interface LogSettings {
  readonly level: LogLevel.LogLevel
  readonly format: LogFormat
  /** Log output held for a stdout that does not keep up, before lines are dropped (SVC_LOG_BACKLOG_BYTES). */
  readonly backlogBytes?: number | undefined
}

const LEVELS: Record<string, LogLevel.LogLevel> = {
  all: "All",
  trace: "Trace",
  debug: "Debug",
  info: "Info",
  warning: "Warn",
  warn: "Warn",
  error: "Error",
  fatal: "Fatal",
  none: "None",
  off: "None"
}

const parseLevel = (text: string): LogLevel.LogLevel | undefined => LEVELS[text.trim().toLowerCase()]

const parseFormat = (text: string, isTty: boolean): LogFormat | undefined => {
  switch (text.trim().toLowerCase()) {
    case "auto":
    case "":
      return isTty ? "pretty" : "json"
    case "json":
      return "json"
    case "pretty":
    case "text":
      return "pretty"
    default:
      return undefined
  }
}

/** SVC_LOG_LEVEL and SVC_LOG_FORMAT, failing with the setting named (src/config/settingErrors.ts). */
export const logSettingsConfig = (isTty = process.stdout.isTTY === true): Config.Config<LogSettings> =>
  Config.all({
    level: Config.String("SVC_LOG_LEVEL").pipe(
      Config.withDefault(defaultTextOf("SVC_LOG_LEVEL")),
      Config.mapEffect((t) => {
        const level = parseLevel(t)
        return level !== undefined ? Effect.succeed(level) : Effect.fail(invalidSetting(
          `SVC_LOG_LEVEL=${quoteSetting("SVC_LOG_LEVEL", t)}: expected one of ${setting("SVC_LOG_LEVEL").choices!.join(", ")}`
        ))
      })
    ),
    format: Config.String("SVC_LOG_FORMAT").pipe(
      Config.withDefault(defaultTextOf("SVC_LOG_FORMAT")),
      Config.mapEffect((t) => {
        const format = parseFormat(t, isTty)
        return format !== undefined ? Effect.succeed(format) : Effect.fail(invalidSetting(
          `SVC_LOG_FORMAT=${quoteSetting("SVC_LOG_FORMAT", t)}: expected auto, json or pretty`
        ))
      })
    ),
    backlogBytes: intSetting("SVC_LOG_BACKLOG_BYTES")
  })

/**
 * The settings straight from the environment, never failing (a bad value falls back to the
 * default): the logger must exist before the settings are checked, to say what is wrong.
 */
export const logSettingsFromEnv = (
  env: Record<string, string | undefined> = process.env,
  isTty = process.stdout.isTTY === true
): LogSettings => ({
  level: parseLevel(env.SVC_LOG_LEVEL ?? "info") ?? "Info",
  format: parseFormat(env.SVC_LOG_FORMAT ?? "auto", isTty) ?? (isTty ? "pretty" : "json")
})

// ---------------------------------------------------------------------------------------------
// The writer: buffered, one write per turn.

export interface LineSink {
  readonly write: (text: string) => void
}

const FLUSH_AT = 64 * 1024
const FLUSH_EVERY_MS = 25

class BufferedWriter {
  private buffer = ""
  private scheduled = false
  constructor(private readonly sink: LineSink) {}
  line(text: string) {
    this.buffer += text + "\n"
    if (this.buffer.length >= FLUSH_AT) this.flush()
    else if (!this.scheduled) {
      this.scheduled = true
      // Unref'd: a pending flush never keeps the process up; the exit handler writes the rest.
      setTimeout(this.flushNow, FLUSH_EVERY_MS).unref()
    }
  }
  readonly flushNow = () => this.flush()
  flush() {
    this.scheduled = false
    if (this.buffer === "") return
    const text = this.buffer
    this.buffer = ""
    this.sink.write(text)
  }
}

/**
 * stdout, bounded: Node queues in memory whatever a pipe or socket does not take at once, so a
 * log collector that stalls would grow the process without limit. Past `backlogBytes` queued,
 * a batch is dropped and its lines counted; the next batch written says how many.
 */
export const boundedSink = (
  stream: () => { readonly writableLength: number; readonly write: (text: string) => unknown },
  backlogBytes: () => number
): LineSink => {
  let dropped = 0
  return {
    write: (text) => {
      const out = stream()
      if (out.writableLength > backlogBytes()) {
        for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) dropped++
        return
      }
      if (dropped > 0) {
        // In the format of the lines it stands for (a JSON line starts with `{`).
        const format: LogFormat = text.charCodeAt(0) === 123 ? "json" : "pretty"
        const message = `log: ${dropped} line(s) dropped: stdout did not take them (more than SVC_LOG_BACKLOG_BYTES held)`
        out.write(formatLine(format, new Date(), "warn", message, [["dropped", dropped]]) + "\n")
        dropped = 0
      }
      out.write(text)
    }
  }
}

/** The default until the validated settings say otherwise (main.ts, at start). */
let stdoutBacklogBytes = defaultOf("SVC_LOG_BACKLOG_BYTES")

/** The bound of the stdout sink (SVC_LOG_BACKLOG_BYTES, as the validated settings read it). */
export const limitStdoutBacklog = (bytes: number | undefined) => {
  if (bytes !== undefined) stdoutBacklogBytes = bytes
}

/**
 * stdout, or nothing once it is gone: a log collector that exits closes the pipe, and the next
 * write fails with EPIPE, an 'error' event that, unheard, ended the process (every request of
 * the cell failing with the collector). Lines are dropped from then on; stderr is told once.
 */
let stdoutGone = false
const onStdoutError = (error: NodeJS.ErrnoException) => {
  if (stdoutGone) return
  stdoutGone = true
  try {
    // stderr may be the same closed pipe: heard too, never thrown.
    process.stderr.on("error", () => {})
    process.stderr.write(`log: stdout failed (${error.code ?? error.message}); log lines are dropped from now on\n`)
  } catch {
    // nowhere left to say it
  }
}
const GONE = { writableLength: 0, write: () => true }

const stdoutSink: LineSink = boundedSink(() => (stdoutGone ? GONE : process.stdout), () => stdoutBacklogBytes)

let stdoutWriter: BufferedWriter | undefined

/** A line writer to stdout (shared, flushed at exit), or to `sink` (tests). */
export const makeWriter = (sink?: LineSink): { readonly line: (text: string) => void; readonly flush: () => void } => {
  if (sink !== undefined) {
    const w = new BufferedWriter(sink)
    return { line: (t) => w.line(t), flush: () => w.flush() }
  }
  if (stdoutWriter === undefined) {
    const w = new BufferedWriter(stdoutSink)
    stdoutWriter = w
    process.stdout.on("error", onStdoutError)
    process.once("exit", () => w.flush())
  }
  const w = stdoutWriter
  return { line: (t) => w.line(t), flush: () => w.flush() }
}

// ---------------------------------------------------------------------------------------------
// Formatting

const levelName = (level: LogLevel.LogLevel): string => level.toLowerCase()

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n))
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : String(n))
/** `HH:MM:SS.mmm` local time, for a terminal. */
const clock = (date: Date) =>
  `${pad2(date.getHours())}:${pad2(date.getMinutes())}:${pad2(date.getSeconds())}.${pad3(date.getMilliseconds())}`

const messageText = (message: unknown): string => {
  if (Array.isArray(message)) return message.map(messageText).join(" ")
  if (typeof message === "string") return message
  if (message instanceof Error) return message.message
  try {
    return JSON.stringify(message) ?? String(message)
  } catch {
    return String(message)
  }
}

const prettyValue = (v: unknown): string => {
  if (typeof v === "string") return /[\s"=]/.test(v) || v === "" ? JSON.stringify(v) : v
  if (typeof v === "number" || typeof v === "boolean" || v === null) return String(v)
  try {
    return JSON.stringify(v) ?? String(v)
  } catch {
    return String(v)
  }
}

const LEVEL_TAGS: Record<string, string> = {
  trace: "TRACE",
  debug: "DEBUG",
  info: "INFO ",
  warn: "WARN ",
  warning: "WARN ",
  error: "ERROR",
  fatal: "FATAL"
}

/** One event as a line: `fields` in order after time, level and message. */
export const formatLine = (
  format: LogFormat,
  date: Date,
  level: string,
  message: string,
  fields: ReadonlyArray<readonly [string, unknown]>
): string => {
  if (format === "json") {
    let out = `{"time":"${date.toISOString()}","level":"${level}","msg":${JSON.stringify(message)}`
    for (const [k, v] of fields) if (v !== undefined) out += `,${JSON.stringify(k)}:${safeJson(v)}`
    return out + "}"
  }
  let out = `${clock(date)} ${LEVEL_TAGS[level] ?? level.toUpperCase()} ${message}`
  for (const [k, v] of fields) if (v !== undefined) out += ` ${k}=${prettyValue(v)}`
  return out
}

const safeJson = (v: unknown): string => {
  try {
    return JSON.stringify(v) ?? "null"
  } catch {
    return JSON.stringify(String(v))
  }
}

/**
 * The process's logger for everything logged with Effect (start-up, warnings, failures): the
 * same line format as the request lines, with the request id of the request it happened in.
 */
export const makeLogger = (format: LogFormat, writer = makeWriter()): Logger.Logger<unknown, void> =>
  Logger.make(({ cause, date, fiber, logLevel, message }) => {
    const fields: Array<readonly [string, unknown]> = []
    const request = Context.getOption(fiber.context, CurrentRequest)
    if (request._tag === "Some") fields.push(["requestId", request.value.requestId])
    for (const [k, v] of Object.entries(fiber.getRef(References.CurrentLogAnnotations))) fields.push([k, v])
    if (cause.reasons.length > 0) fields.push(["cause", Cause.pretty(cause)])
    writer.line(formatLine(format, date, levelName(logLevel), messageText(message), fields))
  })

/**
 * The logger and the minimum level, in place of every other logger (Effect's default one);
 * span events keep going to the tracer.
 */
export const loggingLayer = (settings: LogSettings, writer = makeWriter()): Layer.Layer<never> =>
  Layer.merge(
    Logger.layer([makeLogger(settings.format, writer), Logger.tracerLogger]),
    Layer.succeed(References.MinimumLogLevel, settings.level) as Layer.Layer<never>
  )
