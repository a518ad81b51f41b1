import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { GlConnectSessionDto } from "../api/dtos.js"
import { ConflictWire, NotFoundWire } from "../api/errors.js"
import { IdempotencyKeyHeaders } from "../api/idempotency.js"
import { GlConnectSession } from "../api/resources.js"
import { GlConnection } from "./model.js"
import { TenantPath, WorkspaceErrors } from "./paths.js"

export const GlConnectionResult = Schema.Struct({
  connection: Schema.NullOr(GlConnection).annotate({ description: "null when the tenant has no GL connection" })
}).annotate({ identifier: "GlConnectionResult" })

export class GlGroup extends HttpApiGroup.make("gl")
  .add(
    HttpApiEndpoint.get("getGlConnection", "/tenants/:tenantId/gl", {
      params: TenantPath,
      success: GlConnectionResult,
      error: WorkspaceErrors
    })
      .annotate(OpenApi.Summary, "Get the tenant's GL connection")
      .annotate(OpenApi.Description, "The connection record with its raw status, or `connection: null` when none exists.")
  )
  .add(
    HttpApiEndpoint.post("createGlSession", "/tenants/:tenantId/gl/sessions", {
      params: TenantPath,
      headers: IdempotencyKeyHeaders,
      payload: GlConnectSessionDto,
      success: GlConnectSession.pipe(HttpApiSchema.status(201)),
      error: [...WorkspaceErrors, NotFoundWire, ConflictWire]
    })
      .annotate(OpenApi.Summary, "Start a GL connect session")
      .annotate(
        OpenApi.Description,
        "Returns the GL adapter's sessionUrl (where a person picks a service and authorizes it) and the session's " +
          "consumerId. On success the adapter calls POST /workspace/gl/webhook/success and the connection becomes ACTIVE."
      )
  )
  .add(
    HttpApiEndpoint.delete("deleteGlConnection", "/tenants/:tenantId/gl", {
      params: TenantPath,
      headers: IdempotencyKeyHeaders,
      success: HttpApiSchema.NoContent,
      error: [...WorkspaceErrors, ConflictWire]
    })
      .annotate(OpenApi.Summary, "Remove the tenant's GL connection")
      .annotate(OpenApi.Description, "Idempotent: a no-op (still 204) when no connection exists.")
  )
  .annotate(OpenApi.Title, "GL connection")
  .annotate(OpenApi.Description, "The tenant-level general-ledger connection")
{}
