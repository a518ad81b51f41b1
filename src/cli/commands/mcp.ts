/** mcp: the agent tool server over stdio, proxied to the gateway's /mcp (src/mcp/stdio.ts). */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { CliFailure, gatewayCommand, secretEnv, usage } from "../common.js"

/** The agent's key, from the environment only (a flag would show in the process list). */
const agentKey = secretEnv("SVC_AGENT_KEY")

export const mcp = gatewayCommand(
  "mcp",
  "Serve the agent tools over stdio (MCP) for a local agent host, forwarding to the gateway's /mcp with the agent " +
    "key in SVC_AGENT_KEY",
  {},
  (_, ctx) =>
    Effect.gen(function*() {
      const key = yield* Effect.orDie(agentKey)
      if (Option.isNone(key)) return yield* usage("SVC_AGENT_KEY must hold the agent's API key")
      // Loaded only for this command: the SDK is no weight on the other commands.
      const { runStdioProxy } = yield* Effect.promise(() => import("../../mcp/stdio.js"))
      yield* Effect.tryPromise({
        try: () => runStdioProxy({ gatewayUrl: ctx.baseUrl, apiKey: Redacted.value(key.value) }),
        catch: (e) => new CliFailure({ message: `mcp: ${e instanceof Error ? e.message : String(e)}` })
      })
    })
)
