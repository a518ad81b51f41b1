import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { TenantConfig } from "../services/TenantConfig.js"
import { limitDeclaredBody } from "./bodyLimit.js"
import { shapeErrors } from "./errorResponse.js"
import { checkedJsonBodies } from "./jsonInput.js"

/**
 * Api-wide middleware: oversized bodies answer 413 (a declared Content-Length here; chunked
 * bodies are capped by the Node server, nodeServer.ts), every body passes the one JSON input
 * check (jsonInput.ts) before routing, and every failure leaves in the spec's error shape.
 */
export const GatewayMiddleware = Layer.unwrapEffect(
  Effect.map(TenantConfig, (config) => {
    const limit = limitDeclaredBody(config.maxBodyBytes)
    const checked = checkedJsonBodies(config.maxJsonDepth)
    return HttpApiBuilder.middleware((app) => shapeErrors(limit(checked(app))))
  })
)
