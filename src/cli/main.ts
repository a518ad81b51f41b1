/**
 * `tenant-svc` (alias `svc`): the command-line client of the tenant gateway. Built into
 * dist/cli.js (scripts/build.mjs) and run by the bin src/cli/bin.mjs; `tsx src/cli/main.ts ...`
 * from a checkout. Exit codes: 0 success, 1 an API error (message on stderr), 2 a usage error.
 */
// First: every JSON.parse of the process (the gateway's answers too) reads escaped keys as written.
import "../http/jsonParseFix.js"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { runCli } from "./app.js"

// `svc ... | head`: a reader that goes away early ends the output, not with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0)
    throw error
  })
}

const program = runCli(process.argv.slice(2)).pipe(
  // An empty SVC_URL (or SVC_ACTOR...) is a value, as it always was: `SVC_URL= svc health` is a
  // usage error, not the default URL. The secrets treat empty as unset themselves (common.ts).
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ preserveEmptyStrings: true })),
  // node:http rather than fetch: Node loads its fetch implementation (undici) on first use,
  // tens of milliseconds of a command's start.
  Effect.provide(Layer.merge(NodeServices.layer, NodeHttpClient.layerNodeHttp))
)

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    // Teardown is generic in the value: this program's is the exit code.
    if (Exit.isSuccess(exit)) return onExit(exit.value as number)
    if (Cause.hasInterruptsOnly(exit.cause)) return onExit(130)
    process.stderr.write(`svc: internal error\n${Cause.pretty(exit.cause)}\n`)
    onExit(1)
  }
})
