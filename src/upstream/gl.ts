import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { GlConnectSessionDto } from "../api/dtos.js"
import { ConflictWire, NotFoundWire } from "../api/errors.js"
import { IdempotencyKeyHeaders } from "../api/idempotency.js"
import { GlConnectSession } from "../api/resources.js"
import { GlConnection } from "./model.js"
import { TenantPath } from "./paths.js"

export const GlConnectionResult = Schema.Struct({
  connection: Schema.NullOr(GlConnection).annotations({ description: "null when the tenant has no GL connection" })
}).annotations({ identifier: "GlConnectionResult" })

export class GlGroup extends HttpApiGroup.make("gl")
  .add(
    HttpApiEndpoint.get("getGlConnection", "/tenants/:tenantId/gl")
      .setPath(TenantPath)
      .addSuccess(GlConnectionResult)
      .annotate(OpenApi.Summary, "Get the tenant's GL connection")
      .annotate(OpenApi.Description, "The connection record with its raw status, or `connection: null` when none exists.")
  )
  .add(
    HttpApiEndpoint.post("createGlSession", "/tenants/:tenantId/gl/sessions")
      .setPath(TenantPath)
      .setHeaders(IdempotencyKeyHeaders)
      .setPayload(GlConnectSessionDto)
      .addSuccess(GlConnectSession, { status: 201 })
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Start a GL connect session")
      .annotate(
        OpenApi.Description,
        "Returns the GL adapter's sessionUrl (where a person picks a service and authorizes it) and the session's " +
          "consumerId. On success the adapter calls POST /workspace/gl/webhook/success and the connection becomes ACTIVE."
      )
  )
  .add(
    HttpApiEndpoint.del("deleteGlConnection", "/tenants/:tenantId/gl")
      .setPath(TenantPath)
      .setHeaders(IdempotencyKeyHeaders)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Remove the tenant's GL connection")
      .annotate(OpenApi.Description, "Idempotent: a no-op (still 204) when no connection exists.")
  )
  .annotate(OpenApi.Title, "GL connection")
  .annotate(OpenApi.Description, "The tenant-level general-ledger connection")
{}
