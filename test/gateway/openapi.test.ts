import SwaggerParser from "@apidevtools/swagger-parser"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { raw, withGateway } from "../support/gateway.js"

/** The 21 operations of spec §4 and the live event stream, and no others. */
const SPEC_OPERATIONS = [
  "GET /v1/health",
  "GET /v1/entities",
  "GET /v1/entities/{entityId}/tasks",
  "GET /v1/entities/{entityId}/workflows",
  "POST /v1/entities/{entityId}/tasks",
  "GET /v1/tasks/{taskId}/ui",
  "GET /v1/tasks/{taskId}/snapshots",
  "POST /v1/tasks/{taskId}/action",
  "POST /v1/tasks/{taskId}/row-action",
  "POST /v1/tasks/{taskId}/events",
  "GET /v1/tasks/{taskId}/events",
  "GET /v1/tasks/{taskId}/events/stream",
  "GET /v1/tasks/{taskId}/files",
  "POST /v1/tasks/{taskId}/files",
  "POST /v1/tasks/{taskId}/files/ingest",
  "POST /v1/tasks/{taskId}/files/raw",
  "GET /v1/tasks/{taskId}/files/{documentRef}/download",
  "POST /v1/tasks/{taskId}/data/ingest",
  "POST /v1/subledgers/{ledger}/{rowId}/reject",
  "PATCH /v1/subledgers/{ledger}/{rowId}",
  "GET /v1/gl/status",
  "POST /v1/gl/connect/session",
  "DELETE /v1/gl",
  // The inbox and claims (README "Inbox and assignment").
  "GET /v1/inbox",
  "GET /v1/me",
  "POST /v1/tasks/{taskId}/claim",
  "DELETE /v1/tasks/{taskId}/claim"
]

describe("GET /openapi.json", () => {
  it.effect("an OpenAPI 3.1 document with exactly the 26 operations, each with a summary and a description", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const res = yield* raw("GET", "/openapi.json")
        expect(res.status).toBe(200)
        const doc = res.body
        expect(doc.openapi).toMatch(/^3\.1\./)
        const operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
          Object.entries(ops).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op }))
        )
        expect(operations.map((o) => o.key).sort()).toEqual([...SPEC_OPERATIONS].sort())
        for (const { key, op } of operations) {
          expect(op.summary, key).toEqual(expect.any(String))
          expect(op.description?.length ?? 0, key).toBeGreaterThan(10)
        }
        // Every error response is the spec's shape; Effect's own decode-error shape is not advertised.
        expect(doc.components.schemas.NotFound.required).toEqual(["statusCode", "message", "error"])
        expect(JSON.stringify(doc)).not.toMatch(/HttpApiDecodeError|HttpApiSchemaError|effect\/HttpApiError/)
        expect(doc.paths["/v1/entities"].get.responses["400"].content["application/json"].schema).toEqual({
          $ref: "#/components/schemas/BadRequest"
        })
        const validated = yield* Effect.promise(() => SwaggerParser.validate(structuredClone(doc)))
        expect(validated.info.title).toBe("Tenant gateway")
      })
    ))
})

describe("GET /docs", () => {
  it.effect("an API reference page that needs no network", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const res = yield* raw("GET", "/docs")
        expect(res.status).toBe(200)
        expect(res.headers["content-type"]).toMatch(/text\/html/)
        expect(res.text).toContain("Tenant gateway")
        // Inline script, no CDN, no remote fonts.
        expect(res.text).not.toMatch(/<script[^>]+src=["']https?:/)
        expect(res.text).not.toMatch(/<link[^>]+href=["']https?:/)
        expect(res.text).toContain('"withDefaultFonts":false')
      })
    ))
})
