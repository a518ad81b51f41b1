import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { PayloadTooLarge } from "../api/errors.js"
import { TenantConfig } from "../services/TenantConfig.js"
import { shapeErrors, toResponse } from "./errorResponse.js"

/**
 * Api-wide middleware: a declared Content-Length over the limit answers 413 before a byte is
 * read (and closes the connection so the rest is not read either); chunked bodies are capped
 * by the Node server (nodeServer.ts). Every failure then leaves in the spec's error shape.
 */
export const GatewayMiddleware = Layer.unwrapEffect(
  Effect.map(TenantConfig, (config) => {
    const tooLarge = HttpServerResponse.setHeader(
      toResponse(new PayloadTooLarge({ message: `Request body exceeds the ${config.maxBodyBytes}-byte limit` })),
      "connection",
      "close"
    )
    return HttpApiBuilder.middleware((app) =>
      shapeErrors(
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
          const declared = request.headers["content-length"]
          if (declared !== undefined && Number(declared) > config.maxBodyBytes) {
            return Effect.succeed(tooLarge)
          }
          return app
        })
      )
    )
  })
)
