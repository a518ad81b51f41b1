/**
 * The `svc` command tree and the mapping of failures to exit codes:
 * 0 success; 1 an API error (its message on stderr) or another runtime failure; 2 a usage error.
 */
import * as CliError from "effect/cli/CliError"
import * as CliOutput from "effect/cli/CliOutput"
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
import { CliFailure, commandFlags, group, UsageError } from "./common.js"
import { API_VERSION } from "../api/version.js"

/** The package's version (package.json): the same as the OpenAPI documents and the MCP server say. */
export const VERSION = API_VERSION

export const svc = group(
  "svc",
  "Command-line client of the tenant gateway",
  [health, entities, tasks, inbox, task, events, files, data, subledger, gl, agents, webhooks, links, mcp],
  "svc"
)

/**
 * effect/cli prints no help page and no error itself: reportFailure prints every usage error
 * (main.ts prints the help). Only `--version` after a command is left to it, printed as
 * @effect/cli 0.x printed it.
 */
const presenter: CliOutput.Presenter = {
  present: (event) =>
    event._tag === "Version" ? Effect.sync(() => void process.stdout.write(`${event.version}\n\n`)) : Effect.void
}

/** Runs the command line `args` (the command path first: ./args.ts). */
export const cli = (args: ReadonlyArray<string>) =>
  Command.runWith(svc, { version: VERSION, renderErrors: false })(args).pipe(
    Effect.provideService(CliOutput.Presenter, presenter)
  )

/** Every leaf command of the tree (`tasks list`) with the flags it takes (`--url`, ...). */
export const leafCommands = (): Array<{ readonly path: string; readonly flags: ReadonlyArray<string> }> => {
  const out: Array<{ readonly path: string; readonly flags: ReadonlyArray<string> }> = []
  const visit = (command: Command.Command.Any, path: ReadonlyArray<string>) => {
    if (command.subcommands.length === 0) out.push({ path: path.join(" "), flags: commandFlags(command) })
    for (const { commands } of command.subcommands) for (const sub of commands) visit(sub, [...path, sub.name])
  }
  visit(svc, [])
  return out
}

export const EXIT = { ok: 0, apiError: 1, usage: 2 } as const

const printError = (message: string) => Effect.sync(() => void process.stderr.write(`svc: ${message}\n`))

/** The hint under every usage error: the help of the command named (as far as it goes). */
export const usageHint = (path: ReadonlyArray<string>) => `Run 'svc ${[...path, "--help"].join(" ")}'`

/**
 * A usage error as every command prints it: `svc: <message>` on one line, then the hint; exit 2.
 * A message of the CLI's own may go on with indented details (what a workflow's start
 * parameters are) between the two.
 */
export const printUsageError = (message: string, path: ReadonlyArray<string>) =>
  Effect.as(
    Effect.sync(() => void process.stderr.write(`svc: ${message}\n${usageHint(path)}\n`)),
    EXIT.usage
  )

/** A message on one line: its paragraphs joined with "; ". */
const oneLine = (text: string) =>
  text
    .split(/\n\s*\n/)
    .map((block) => block.replace(/\s+/g, " ").trim())
    .filter((block) => block !== "")
    .join("; ")

/**
 * effect/cli's errors in the words the CLI has always used (those of @effect/cli 0.x). A value
 * the CLI's own flag and argument checks refuse (./common.ts) carries its whole message.
 */
const cliErrorMessage = (error: CliError.CliError): string => {
  switch (error._tag) {
    case "ShowHelp":
      return error.errors.length > 0 ? cliErrorMessage(error.errors[0]!) : "missing command"
    case "MissingArgument":
      return `Missing argument <${error.argument}>`
    case "MissingOption":
      return `Expected to find option: '--${error.option}'`
    case "UnrecognizedOption":
      return `Received unknown argument: '${error.option}'`
    case "UnexpectedArgument":
      return `Received unknown argument: '${error.arguments[0] ?? ""}'`
    case "InvalidValue":
      // A flag without its value (its expected "type" is one word), or a flag given twice.
      if (error.kind === "flag" && ((error.value === "" && !error.expected.includes(" ")) || error.expected === "at most 1 value")) {
        return `Received unknown argument: '--${error.option}'`
      }
      // A choice effect/cli checks itself (--log-level): `"a" | "b"`.
      if (/^"[^"]*"( \| "[^"]*")+$/.test(error.expected)) {
        return `Expected one of the following cases: ${error.expected.replace(/"/g, "").split(" | ").join(", ")}`
      }
      return oneLine(error.expected)
    default:
      return oneLine(error.message)
  }
}

/**
 * The message of a usage error when the command line names a group and no command of it
 * (`svc`, `svc tasks`, `svc tasks nope`), found before effect/cli parses (which would blame
 * the top level for any of them).
 */
export const incompleteCommandMessage = (path: ReadonlyArray<string>, stray: string | undefined, choices: ReadonlyArray<string>) => {
  const group = path.length === 0 ? "" : `'svc ${path.join(" ")}' `
  return stray === undefined
    ? `${group}${group === "" ? "missing command" : "needs a command"}: one of ${choices.join(", ")}`
    : `${group === "" ? "unknown command" : `${group}has no command`} "${stray}": one of ${choices.join(", ")}`
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
