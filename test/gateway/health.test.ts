import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ServiceUnavailable } from "../../src/api/errors.js"
import { client, expectError, raw, withGateway } from "../support/gateway.js"

describe("GET /v1/health", () => {
  it.effect("answers {status: ok}", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const api = yield* client
        expect(yield* api.health.health()).toEqual({ status: "ok" })
        const res = yield* raw("GET", "/v1/health")
        expect(res.status).toBe(200)
        expect(res.body).toEqual({ status: "ok" })
      })
    ))

  it.effect("needs no tenant binding: ok with SVC_TENANT_SLUG unset, others answer 503 saying why", () =>
    withGateway(() =>
      Effect.gen(function*() {
        expect((yield* raw("GET", "/v1/health")).body).toEqual({ status: "ok" })
        expectError(yield* raw("GET", "/v1/entities"), 503, "Service Unavailable", "SVC_TENANT_SLUG is not set")
      }), { config: { tenantSlug: Option.none() } }))

  it.effect("ok while the upstream is down; other endpoints answer 503", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        ws.faults.all = () => new ServiceUnavailable({ message: "workspace service unreachable" })
        expect((yield* raw("GET", "/v1/health")).body).toEqual({ status: "ok" })
        expectError(yield* raw("GET", "/v1/entities"), 503, "Service Unavailable", "unreachable")
      })
    ))

  it.effect("an unknown tenant slug answers 503 naming it", () =>
    withGateway(() =>
      Effect.gen(function*() {
        expectError(yield* raw("GET", "/v1/entities"), 503, "Service Unavailable", "\"nobody\"")
      }), { config: { tenantSlug: Option.some("nobody") } }))
})
