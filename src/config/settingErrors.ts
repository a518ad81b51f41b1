/**
 * How a bad setting is said: its name, the value it has (secrets by length only) and what was
 * expected, e.g. `SVC_MAX_BODY_BYTES="abc": expected an integer from 1 to 535822336`, one line per setting.
 * Start-up failures (src/http/server/failStart.ts) print these lines.
 */
import * as Config from "effect/Config"
import * as Schema from "effect/Schema"
import { quoted } from "../lib/quoted.js"
import * as SchemaIssue from "effect/SchemaIssue"

/** Settings whose values are never printed, only their length. */
const SECRET = /TOKEN|KEY|SECRET|PASSWORD|HEADERS/i

/**
 * A URL's credentials (`scheme://user:password@`, `scheme://token@`) as `user:***@` and `***@`: a
 * URL setting refused for having them (a base URL takes none) or for anything else must not print
 * them to a log.
 */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#@]*)@/i
const withoutCredentials = (value: string): string =>
  value.replace(USERINFO, (_, scheme: string, info: string) => {
    const colon = info.indexOf(":")
    return `${scheme}${colon === -1 ? "***" : `${info.slice(0, colon)}:***`}@`
  })

/** How a setting's value is quoted in a message. */
export const quoteSetting = (name: string, value: string | undefined): string => {
  if (value === undefined) return "is not set"
  if (SECRET.test(name)) return `(${value.length} characters, not shown)`
  return quoted(withoutCredentials(value))
}

/**
 * A setting our own parsing refused, `message` saying it in full (`NAME="value": expected ...`):
 * a ConfigError whose one issue has no path, printed as it is.
 */
export const invalidSetting = (message: string): Config.ConfigError =>
  new Config.ConfigError(new Schema.SchemaError(new SchemaIssue.InvalidValue({ message })))

/**
 * The setting `name` refused by a check across settings: `expected` says what it should be, and
 * the line quotes the value from the environment it was read from (`NAME="value": expected ...`).
 */
export const invalidSettingAt = (name: string, expected: string): Config.ConfigError =>
  new Config.ConfigError(
    new Schema.SchemaError(new SchemaIssue.Pointer([name], new SchemaIssue.InvalidValue({ message: expected })))
  )

const PORT_EXPECTED = "expected a port number from 1 to 65535"

/** Effect Config's own messages (`Expected <x>[, got <v>]`), as what the setting expects. */
const expectation = (message: string, name: string): string => {
  const m = /^Expected (.+?)(?:, got .*)?$/s.exec(message)
  if (m === null) return message
  const what = m[1]!
  // Config.Port fails at whichever of its steps the value misses (a number, an integer, the
  // range): a port setting says what it takes whatever the step, as on Effect 3.
  if (/(^|_)PORT$/.test(name) && /integer|number|^a value between/.test(what)) return PORT_EXPECTED
  if (/integer/.test(what)) return "expected an integer"
  if (/finite number|^a number/.test(what)) return "expected a number"
  if (/"true" \| "yes"|boolean/.test(what)) return "expected true or false"
  if (/URL/.test(what)) return "expected an absolute URL, e.g. http://127.0.0.1:3000"
  if (what === "a value between 1 and 65535") return PORT_EXPECTED
  return `expected ${what}`
}

const issuesOf = SchemaIssue.makeFormatterStandardSchemaV1()

/** One line per bad setting of a ConfigError: `NAME=value: what was expected`. */
export const describeConfigError = (
  error: Config.ConfigError,
  env: Record<string, string | undefined> = process.env
): Array<string> => {
  const cause = error.cause
  if (!Schema.isSchemaError(cause)) return [cause.message]
  const lines: Array<string> = []
  for (const issue of issuesOf(cause.issue).issues) {
    const name = (issue.path ?? []).map((p) => String(typeof p === "object" && p !== null && "key" in p ? p.key : p)).join("_")
    if (name === "") {
      lines.push(issue.message)
      continue
    }
    const line = env[name] === undefined
      ? `${name} is required but not set`
      // A message that names the setting already says it its own way.
      : issue.message.startsWith(`${name} `) || issue.message.startsWith(`${name}=`) || issue.message.startsWith(`${name}:`)
      ? issue.message
      : `${name}=${quoteSetting(name, env[name])}: ${expectation(issue.message, name)}`
    if (!lines.includes(line)) lines.push(line)
  }
  return lines.length === 0 ? [error.message] : lines
}
