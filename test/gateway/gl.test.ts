import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { glStatusOf } from "../../src/services/gl.js"
import { client, raw, withGateway } from "../support/gateway.js"
import { ACME } from "../support/world.js"

describe("GL", () => {
  it.effect("status reports the ACTIVE connection, lastSyncAt the later of updated_at and connectedAt", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const api = yield* client
        expect(yield* api.gl.glStatus()).toEqual({
          connected: true,
          tenantId: ACME,
          provider: "merge",
          service: "quickbooks_online",
          status: "ACTIVE",
          lastSyncAt: "2026-11-20T06:30:00Z",
          workspaceName: "Acme QBO"
        })
      })
    ))

  it("connected only when ACTIVE; workspaceName falls back to metadata.service; lastSyncAt null when unknown", () => {
    const status = glStatusOf(ACME, Option.some({
      tenantId: ACME, provider: "local", service: "xero", status: "PENDING", connectedAt: "2026-11-21T00:00:00Z",
      metadata: { service: "xero-ledger", updated_at: "2026-11-01T00:00:00Z" }
    }))
    expect(status).toMatchObject({ connected: false, status: "PENDING", workspaceName: "xero-ledger", lastSyncAt: "2026-11-21T00:00:00Z" })
    expect(glStatusOf(ACME, Option.some({
      tenantId: ACME, provider: "local", service: "xero", status: "ACTIVE", connectedAt: null, metadata: {}
    }))).toMatchObject({ connected: true, lastSyncAt: null, workspaceName: "xero" })
  })

  it.effect("DELETE is 204 and idempotent; then status is only connected=false plus tenantId", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const first = yield* raw("DELETE", "/v1/gl")
        expect(first.status).toBe(204)
        expect(first.text).toBe("")
        expect((yield* raw("DELETE", "/v1/gl")).status).toBe(204)
        expect((yield* raw("GET", "/v1/gl/status")).body).toEqual({ connected: false, tenantId: ACME })
      })
    ))

  it.effect("connect session returns sessionUrl and consumerId; completing the flow makes it ACTIVE", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        yield* raw("DELETE", "/v1/gl")
        const res = yield* raw("POST", "/v1/gl/connect/session", { serviceId: "xero" })
        expect(res.status).toBe(200)
        expect(res.body).toEqual({ sessionUrl: expect.stringMatching(/^https?:\/\//), consumerId: expect.any(String) })
        expect((yield* raw("POST", "/v1/gl/connect/session", {})).status).toBe(200)
        expect((yield* raw("POST", "/v1/gl/connect/session", { serviceId: 3 })).status).toBe(400)
        expect(yield* ws.completeGl(res.body.consumerId, "xero")).toBe(true)
        expect((yield* raw("GET", "/v1/gl/status")).body).toMatchObject({ connected: true, service: "xero", status: "ACTIVE" })
      })
    ))
})
