import * as ParsedPayload from "../http/input/parsedPayload.js"
import * as Effect from "effect/Effect"
import { GatewayApi } from "../api/Api.js"
import { connectGl, disconnectGl, glStatus } from "../services/gl.js"

export const GlLive = ParsedPayload.group(GatewayApi, "gl", (handlers) =>
  Effect.succeed(
    handlers
      .handle("glStatus", () => glStatus)
      .handle("glConnectSession", ({ payload }) => connectGl(payload.serviceId))
      .handle("glDisconnect", () => disconnectGl)
  ))
