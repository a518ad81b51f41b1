import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { GlConnectSessionDto } from "./dtos.js"
import { CommonErrors, ConflictWire } from "./errors.js"
import { GlConnectSession, GlStatus } from "./resources.js"

export class GlGroup extends HttpApiGroup.make("gl")
  .add(
    HttpApiEndpoint.get("glStatus", "/gl/status", { success: GlStatus, error: CommonErrors })
      .annotate(OpenApi.Summary, "GL connection status")
      .annotate(
        OpenApi.Description,
        "connected is true only when the connection is ACTIVE. With no GL configured: only connected=false and tenantId."
      )
  )
  .add(
    HttpApiEndpoint.post("glConnectSession", "/gl/connect/session", {
      payload: GlConnectSessionDto,
      success: GlConnectSession,
      error: [...CommonErrors, ConflictWire]
    })
      .annotate(OpenApi.Summary, "Start a GL connect session")
      .annotate(
        OpenApi.Description,
        "Returns a sessionUrl to open in a popup or tab; poll /v1/gl/status until connected."
      )
  )
  .add(
    HttpApiEndpoint.delete("glDisconnect", "/gl", { success: HttpApiSchema.NoContent, error: [...CommonErrors, ConflictWire] })
      .annotate(OpenApi.Summary, "Remove the GL connection")
      .annotate(OpenApi.Description, "Idempotent: 204 also when no connection exists.")
  )
  .annotate(OpenApi.Title, "GL")
  .annotate(OpenApi.Description, "The tenant's general-ledger connection (one per tenant)")
{}
