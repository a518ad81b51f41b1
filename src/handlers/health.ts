import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { GatewayApi } from "../api/Api.js"

const ok = { status: "ok" } as const

export const HealthLive = HttpApiBuilder.group(GatewayApi, "health", (handlers) =>
  handlers.handle("health", () => Effect.succeed(ok)))
