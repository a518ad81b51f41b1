/**
 * The gateway's whole /v1 contract. Imports no implementation: the OpenAPI document,
 * the typed client and the CLI derive from this value alone.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { DataGroup } from "./data.js"
import { EntitiesGroup } from "./entities.js"
import {
  BadGatewayWire,
  BadRequestWire,
  GatewayTimeoutWire,
  InternalServerErrorWire,
  PayloadTooLargeWire,
  ServiceUnavailableWire
} from "./errors.js"
import { EventsGroup } from "./events.js"
import { FilesGroup } from "./files.js"
import { GlGroup } from "./gl.js"
import { HealthGroup } from "./health.js"
import { SubledgersGroup } from "./subledgers.js"
import { TasksGroup } from "./tasks.js"

/**
 * HttpApi declares its own decode-error shape on every endpoint; the gateway answers decode
 * failures as BadRequest (see http/errorResponse.ts), so the document says so.
 */
function advertiseOwnDecodeErrors(spec: Record<string, any>): Record<string, any> {
  const decodeRef = "#/components/schemas/HttpApiDecodeError"
  const json = JSON.stringify(spec, (key, value) =>
    key === "schema" && Array.isArray(value?.anyOf) && value.anyOf.some((s: any) => s.$ref === decodeRef)
      ? (value.anyOf.length === 2 ? value.anyOf.find((s: any) => s.$ref !== decodeRef) : { anyOf: value.anyOf.filter((s: any) => s.$ref !== decodeRef) })
      : value)
  const out = JSON.parse(json)
  delete out.components.schemas.HttpApiDecodeError
  for (const path of Object.values(out.paths as Record<string, unknown>)) {
    for (const op of Object.values(path as Record<string, any>)) {
      const bad = op?.responses?.["400"]
      if (bad !== undefined) bad.description = "The request is malformed: the message names the field"
    }
  }
  return out
}

export class GatewayApi extends HttpApi.make("gateway")
  .add(HealthGroup)
  .add(EntitiesGroup)
  .add(TasksGroup)
  .add(EventsGroup)
  .add(FilesGroup)
  .add(DataGroup)
  .add(SubledgersGroup)
  .add(GlGroup)
  .prefix("/v1")
  // Any request can be malformed or too large; any upstream-backed one can meet upstream trouble.
  .addError(BadRequestWire)
  .addError(PayloadTooLargeWire)
  .addError(InternalServerErrorWire)
  .addError(BadGatewayWire)
  .addError(ServiceUnavailableWire)
  .addError(GatewayTimeoutWire)
  .annotate(OpenApi.Transform, advertiseOwnDecodeErrors)
  .annotate(OpenApi.Title, "Tenant gateway")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "A tenant-scoped gateway: one process per tenant, bound by SVC_TENANT_SLUG. Every error body is " +
      "`{statusCode, message, error}`."
  )
{}
