/**
 * The `svc` command tree and the mapping of failures to exit codes:
 * 0 success; 1 an API error (its message on stderr) or another runtime failure; 2 a usage error.
 */
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as ValidationError from "@effect/cli/ValidationError"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import { isApiError } from "../api/errors.js"
import { isNotImplemented } from "../client/registry.js"
import { agents } from "./commands/agents.js"
import { data } from "./commands/data.js"
import { entities, health, tasks } from "./commands/entities.js"
import { events } from "./commands/events.js"
import { files } from "./commands/files.js"
import { gl } from "./commands/gl.js"
import { mcp } from "./commands/mcp.js"
import { subledger } from "./commands/subledger.js"
import { task } from "./commands/task.js"
import { CliFailure, group, UsageError } from "./common.js"

export const VERSION = "0.1.0"

export const svc = group(
  "svc",
  "Command-line client of the tenant gateway",
  [health, entities, tasks, task, events, files, data, subledger, gl, agents, mcp],
  "svc"
)

export const cli = Command.run(svc, { name: "svc", version: VERSION })

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

/** The message on one line: @effect/cli's help text loses its colours, its blocks join with "; ". */
const oneLine = (text: string) =>
  text
    // eslint-disable-next-line no-control-regex
    .replace(/\u001b\[[0-9;]*m/g, "")
    .split(/\n\s*\n/)
    .map((block) => block.replace(/\s+/g, " ").trim())
    .filter((block) => block !== "")
    .join("; ")

/**
 * The message of a usage error when the command line names a group and no command of it
 * (`svc`, `svc tasks`, `svc tasks nope`), found before @effect/cli parses (which would blame
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
 * usage hint). @effect/cli's own printing of its validation errors is silenced (main.ts), so
 * every usage error comes out here, the same way.
 */
export const reportFailure = (error: unknown, path: ReadonlyArray<string> = []): Effect.Effect<number> => {
  if (ValidationError.isValidationError(error)) {
    return printUsageError(oneLine(HelpDoc.toAnsiText(error.error)), path)
  }
  if (error instanceof UsageError) return printUsageError(error.message, path)
  if (isApiError(error) || isNotImplemented(error)) {
    // The status, unless the message already names it ("Row in status APPROVED cannot be edited").
    const status = "currentStatus" in error ? error.currentStatus : undefined
    const extra = status !== undefined && !error.message.includes(status) ? ` (current status: ${status})` : ""
    return Effect.as(printError(`${error.message}${extra} [${error.statusCode} ${error.error}]`), EXIT.apiError)
  }
  if (error instanceof CliFailure) return Effect.as(printError(error.message), EXIT.apiError)
  if (HttpClientError.isHttpClientError(error)) {
    const target = `${error.request.method} ${error.request.url}`
    if (error._tag === "RequestError") {
      const cause = error.cause as { message?: string; cause?: { code?: string; message?: string } } | undefined
      const why = cause?.cause?.code ?? cause?.cause?.message ?? cause?.message ?? error.reason
      return Effect.as(printError(`cannot reach the service (${target}): ${why}`), EXIT.apiError)
    }
    // A status the contract does not declare (the 401/403 of an edge identity set-up, say):
    // its body is still in the error shape most of the time, and says why.
    return Effect.flatMap(Effect.option(error.response.json), (body) => {
      const shaped = Option.getOrUndefined(body) as { statusCode?: unknown; message?: unknown; error?: unknown } | undefined
      return Effect.as(
        printError(
          typeof shaped?.message === "string" && typeof shaped.error === "string"
            ? `${shaped.message} [${error.response.status} ${shaped.error}]`
            : `unexpected response ${error.response.status} from ${target}${error.description ? `: ${error.description}` : ""}`
        ),
        EXIT.apiError
      )
    })
  }
  if (ParseResult.isParseError(error)) {
    return Effect.as(printError(`unexpected response body: ${ParseResult.TreeFormatter.formatErrorSync(error)}`), EXIT.apiError)
  }
  return Effect.as(printError(error instanceof Error ? error.message : String(error)), EXIT.apiError)
}
