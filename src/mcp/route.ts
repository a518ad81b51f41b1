/**
 * The agent tool server's route on the gateway's router: `/mcp`, every method. The server
 * itself (./server.ts: the MCP SDK, its zod schemas, the tools' JSON Schemas) is loaded and
 * built on the first request to /mcp, not at start: measured 12.7 MB of idle RSS and ~60 ms of
 * start-up for a process that may never serve an agent (bench S6, bench/PROFILE.md).
 * Its settings are read at start, so a bad one still stops the process naming the variable.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as Layer from "effect/Layer"
import { Tenant } from "../services/Tenant.js"
import { MCP_PATH, McpConfig } from "./McpConfig.js"
import { AgentTimeline } from "./AgentTimeline.js"
import type { ToolServices } from "./toolkit.js"

export const McpRoutes = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const services = yield* Effect.context<ToolServices>()
    // One handler (one failure limiter) for the process, made by the first request.
    const handler = yield* Effect.cached(
      Effect.promise(() => import("./server.js")).pipe(
        Effect.flatMap((server) => server.makeMcpHandler(services))
      )
    )
    yield* router.add("*", MCP_PATH, Effect.flatten(handler))
  })
)

/** The tool server's layer: its route, settings from the environment, one timeline service. */
export const McpLive = McpRoutes.pipe(
  Layer.provide(AgentTimeline.layer),
  Layer.provide(McpConfig.fromEnv),
  Layer.provide(Tenant.layer)
)
