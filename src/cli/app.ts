/**
 * The `svc` command tree and the mapping of failures to exit codes:
 * 0 success; 1 an API error (its message on stderr) or another runtime failure; 2 a usage error.
 */
import * as CliError from "effect/cli/CliError"
import * as CliConfig from "effect/cli/CliConfig"
import * as CliOutput from "effect/cli/CliOutput"
import * as GlobalFlag from "effect/cli/GlobalFlag"
import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"
import * as HttpClientError from "effect/http/HttpClientError"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { isApiError } from "../api/errors.js"
import { isNotImplemented } from "../client/registry.js"
import { agents } from "./commands/agents.js"
import { links } from "./commands/links.js"
import { data } from "./commands/data.js"
import { entities, health, tasks } from "./commands/entities.js"
import { events } from "./commands/events.js"
import { files } from "./commands/files.js"
import { gl } from "./commands/gl.js"
import { inbox } from "./commands/inbox.js"
import { mcp } from "./commands/mcp.js"
import { subledger } from "./commands/subledger.js"
import { task } from "./commands/task.js"
import { webhooks } from "./commands/webhooks.js"
import { actor, actorHeader, CliFailure, commandFlags, quoted, root, sharedFlagNames, sharedValueFlags, terminalSafe, UsageError } from "./common.js"
import { helpFormatter } from "./help.js"
import { API_VERSION } from "../api/version.js"

/** The package's version (package.json): the same as the OpenAPI documents and the MCP server say. */
export const VERSION = API_VERSION

export const svc = root.pipe(
  Command.withDescription(
    "tenant-svc (also installed as svc): the command-line client of the tenant gateway. SVC_TOKEN " +
      "(environment only), when set, is sent to the gateway as a bearer token. Exit codes: 0 success; 1 an " +
      "API error, an unreachable service or a timeout; 2 a usage error."
  ),
  Command.withSubcommands([health, entities, tasks, inbox, task, events, files, data, subledger, gl, agents, webhooks, links, mcp]),
  Command.withGlobalFlags([actor, actorHeader])
)

/** effect/cli's built-in flags the CLI keeps: help and version (no wizard, completions or log level). */
const cliConfig = CliConfig.make({ builtIns: [GlobalFlag.Help, GlobalFlag.Version] })

/** Help asked for and the version on stdout, plain; usage errors are left to reportFailure. */
const presenter: CliOutput.Presenter = {
  present: (event) =>
    Effect.sync(() => {
      if (event._tag === "Help" && event.reason === "Requested") process.stdout.write(`${helpFormatter.formatHelpDoc(event.helpDoc)}\n`)
      else if (event._tag === "Version") process.stdout.write(`tenant-${event.name} ${event.version}\n`)
    })
}

/** Runs the command line `args` (process.argv without node and the script). */
export const cli = (args: ReadonlyArray<string>) =>
  Command.runWith(svc, { version: VERSION, renderErrors: false })(args).pipe(
    Effect.provideService(CliOutput.Presenter, presenter),
    Effect.provideService(CliConfig.CliConfig, cliConfig)
  )

export const EXIT = { ok: 0, apiError: 1, usage: 2 } as const

const printError = (message: string) => Effect.sync(() => void process.stderr.write(`svc: ${terminalSafe(message)}\n`))

/** The hint under every usage error: the help of the command named (as far as it goes). */
export const usageHint = (path: ReadonlyArray<string>) => `Run 'svc ${[...path, "--help"].join(" ")}'`

/**
 * A usage error as every command prints it: `svc: <message>` on one line, then the hint; exit 2.
 * A message of the CLI's own may go on with indented details (what a workflow's start
 * parameters are) between the two.
 */
export const printUsageError = (message: string, path: ReadonlyArray<string>) =>
  Effect.as(
    Effect.sync(() => void process.stderr.write(`svc: ${terminalSafe(message)}\n${usageHint(path)}\n`)),
    EXIT.usage
  )

/** A message on one line: its paragraphs joined with "; ". */
const oneLine = (text: string) =>
  text
    .split(/\n\s*\n/)
    .map((block) => block.replace(/\s+/g, " ").trim())
    .filter((block) => block !== "")
    .join("; ")


const levenshtein = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = row
  }
  return previous[b.length]!
}

/**
 * The candidates closest to `input`: a few edits away (one for short names), or starting with
 * it (`--comm` for `--comments`). None when nothing is that close.
 */
export const closest = (input: string, candidates: Iterable<string>): Array<string> => {
  const given = input.toLowerCase()
  const core = given.replace(/^-+/, "").length
  // A one-letter flag is near every other; a long input is near nothing (and costly to compare).
  if (core <= 1 || core > 64) return []
  const limit = core <= 3 ? 1 : 2
  let best: Array<string> = []
  let bestDistance = Infinity
  for (const candidate of new Set(candidates)) {
    const distance = given.length >= 4 && candidate.startsWith(given) ? 0.5 : levenshtein(given, candidate)
    if (distance > limit || distance > bestDistance) continue
    if (distance < bestDistance) best = []
    bestDistance = distance
    best.push(candidate)
  }
  return best.slice(0, 3)
}

const didYouMean = (names: ReadonlyArray<string>) => names.length === 0 ? "" : `: did you mean ${names.join(" or ")}?`

/** The command at `path` (["svc", "tasks", "list"]), as far as the tree goes. */
const commandAt = (path: ReadonlyArray<string>): Command.Command.Any => {
  let command: Command.Command.Any = svc
  for (const name of path.slice(1)) {
    const next = command.subcommands.flatMap((g) => g.commands).find((c) => c.name === name)
    if (next === undefined) break
    command = next
  }
  return command
}

const childNames = (command: Command.Command.Any) => command.subcommands.flatMap((g) => g.commands).map((c) => c.name)

/** The flags every command takes: the root's and effect/cli's built-in ones. */
const SHARED_FLAGS = [...sharedFlagNames(), "--help", "-h", "--version", "-v"]
const VALUE_FLAGS = new Set(sharedValueFlags())

const commandName = (path: ReadonlyArray<string>) => `'${path.join(" ")}'`

/**
 * effect/cli's errors in the CLI's words: each names the flag, argument or command and the value
 * given, and the closest flag or command when one is near. A value the CLI's own flag and
 * argument checks refuse (./common.ts) carries its whole message.
 */
const cliErrorMessage = (error: CliError.CliError): string => {
  switch (error._tag) {
    case "ShowHelp": {
      if (error.errors.length > 0) return [...new Set(error.errors.map(cliErrorMessage))].join("; ")
      // A group run without a command of it (the root's handler, ./common.ts).
      const path = error.commandPath.length <= 1 ? "" : `${commandName(error.commandPath)} `
      return `${path === "" ? "missing command" : `${path}needs a command`}: one of ${childNames(commandAt(error.commandPath)).join(", ")}`
    }
    case "UnknownSubcommand": {
      const parent = error.parent ?? ["svc"]
      const choices = childNames(commandAt(parent))
      const where = parent.length <= 1 ? "unknown command" : `${commandName(parent)} has no command`
      return `${where} ${quoted(error.subcommand)}: one of ${choices.join(", ")}${didYouMean(closest(error.subcommand, choices))}`
    }
    case "MissingArgument":
      return `missing argument <${error.argument}>`
    case "MissingOption":
      return `missing flag --${error.option}`
    case "UnrecognizedOption": {
      const path = error.command ?? ["svc"]
      const known = [...commandFlags(commandAt(path)), ...SHARED_FLAGS]
      const flag = error.option.split("=", 1)[0]!
      return `unknown flag ${quoted(flag)} for ${commandName(path)}${didYouMean(closest(flag, known))}`
    }
    case "UnexpectedArgument":
      return `unexpected argument${error.arguments.length === 1 ? "" : "s"} ${error.arguments.map(quoted).join(" ")}`
    case "InvalidValue": {
      const name = error.kind === "flag" ? `--${error.option}` : `<${error.option}>`
      if (error.kind === "flag" && error.value === "" && (/^[\w-]+$/.test(error.expected) || error.expected.includes(" | "))) {
        return `${name}: needs a value`
      }
      if (error.expected === "at most 1 value") return `${name}: given more than once`
      // A choice effect/cli checks itself (--completions): `"a" | "b"` or `a | b`.
      if (error.expected.includes(" | ")) {
        const choices = error.expected.replace(/^Expected /, "").replace(/"/g, "").split(" | ")
        return `${name}: ${quoted(error.value)} is not one of ${choices.join(", ")}`
      }
      // The CLI's own checks say it all, naming the flag or argument first.
      const message = oneLine(error.expected)
      return message.startsWith(name) ? message : `${name}: ${quoted(error.value)}: ${message}`
    }
    default:
      return oneLine(error.message)
  }
}

/**
 * The command a command line names, as far as it goes (["tasks", "list"]), for the usage hint:
 * the words that name commands, skipping flags and the values of the shared flags that take one.
 */
export const commandPathOf = (argv: ReadonlyArray<string>): Array<string> => {
  const path: Array<string> = []
  let command: Command.Command.Any = svc
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!
    if (token === "--") break
    if (token.startsWith("-") && token !== "-") {
      if (VALUE_FLAGS.has(token)) i++
      continue
    }
    const next = command.subcommands.flatMap((g) => g.commands).find((c) => c.name === token)
    if (next === undefined) break
    path.push(token)
    command = next
  }
  return path
}

/**
 * Prints what went wrong and answers the exit code. `path` is the command named (for the
 * usage hint). effect/cli prints nothing itself (`cli` above), so every usage error comes out
 * here, the same way.
 */
export const reportFailure = (error: unknown, path: ReadonlyArray<string> = []): Effect.Effect<number> => {
  if (CliError.isCliError(error)) return printUsageError(cliErrorMessage(error), path)
  if (error instanceof UsageError) return printUsageError(error.message, path)
  if (isApiError(error) || isNotImplemented(error)) {
    // The status, unless the message already names it ("Row in status APPROVED cannot be edited").
    const status = "currentStatus" in error ? error.currentStatus : undefined
    const extra = status !== undefined && !error.message.includes(status) ? ` (current status: ${status})` : ""
    return Effect.as(printError(`${error.message}${extra} [${error.statusCode} ${error.error}]`), EXIT.apiError)
  }
  if (error instanceof CliFailure) return Effect.as(printError(error.message), EXIT.apiError)
  if (HttpClientError.isHttpClientError(error)) {
    const reason = error.reason
    const target = `${reason.request.method} ${reason.request.url}`
    if (reason._tag === "TransportError" || reason._tag === "EncodeError" || reason._tag === "InvalidUrlError") {
      const cause = reason.cause as { message?: string; code?: string; cause?: { code?: string; message?: string } } | undefined
      const why = cause?.cause?.code ?? cause?.cause?.message ?? cause?.message ?? reason.description ?? reason._tag.replace(/Error$/, "")
      return Effect.as(printError(`cannot reach the service (${target}): ${why}`), EXIT.apiError)
    }
    // A status the contract does not declare (the 401/403 of an edge identity set-up, say):
    // its body is still in the error shape most of the time, and says why.
    const response = reason.response
    return Effect.flatMap(Effect.option(response.json), (body) => {
      const shaped = Option.getOrUndefined(body) as { statusCode?: unknown; message?: unknown; error?: unknown } | undefined
      return Effect.as(
        printError(
          typeof shaped?.message === "string" && typeof shaped.error === "string"
            ? `${shaped.message} [${response.status} ${shaped.error}]`
            : `unexpected response ${response.status} from ${target}${reason.description ? `: ${reason.description}` : ""}`
        ),
        EXIT.apiError
      )
    })
  }
  if (Schema.isSchemaError(error)) {
    return Effect.as(printError(`unexpected response body: ${error.message}`), EXIT.apiError)
  }
  return Effect.as(printError(error instanceof Error ? error.message : String(error)), EXIT.apiError)
}

/** A command line run to its exit code: what it prints, printed; every failure reported. */
export const runCli = (argv: ReadonlyArray<string>) =>
  Effect.suspend(() => cli(argv)).pipe(
    Effect.as(EXIT.ok),
    Effect.catch((error) => reportFailure(error, commandPathOf(argv)))
  )
