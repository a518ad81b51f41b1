/**
 * `svc`: the command-line client of the tenant gateway. Run as `tsx src/cli/main.ts ...` (or
 * the `svc` bin). Exit codes: 0 success, 1 an API error (message on stderr), 2 a usage error.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { cli, reportFailure } from "./app.js"

// `svc ... | head`: a reader that goes away early ends the output, not with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0)
    throw error
  })
}

const program = Effect.suspend(() => cli(process.argv)).pipe(
  Effect.as(0),
  Effect.catchAll(reportFailure),
  Effect.provide(Layer.merge(NodeContext.layer, FetchHttpClient.layer))
)

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    if (Exit.isSuccess(exit)) return onExit(exit.value as number)
    if (Cause.isInterruptedOnly(exit.cause)) return onExit(130)
    process.stderr.write(`svc: internal error\n${Cause.pretty(exit.cause)}\n`)
    onExit(1)
  }
})
