/**
 * The workspace service's contract, as the gateway consumes it: one endpoint per
 * WorkspaceClient method, plus the agent registry and the GL adapter's webhook. Its OpenAPI
 * document (GET /workspace/openapi.json, docs/workspace-openapi.json) is what a team implements
 * in front of their own workspace service. Imports no implementation.
 *
 * Tenant-scoped paths carry the tenant id; another tenant's record answers exactly like a
 * missing one (404). Every error body is `{statusCode, message, error}` (plus currentStatus or
 * code on some 400s).
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import {
  BadGatewayWire,
  BadRequestWire,
  GatewayTimeoutWire,
  InternalServerErrorWire,
  ServiceUnavailableWire
} from "../../api/errors.js"
import { DocumentsGroup } from "./documents.js"
import { GlGroup } from "./gl.js"
import { RecordsGroup } from "./records.js"
import { RegistryGroup } from "./registry.js"
import { TasksGroup } from "./tasks.js"
import { TenantsGroup } from "./tenants.js"

/**
 * HttpApi declares its own decode-error shape on every endpoint; the workspace server answers
 * decode failures as BadRequest in the spec's shape (http/errorResponse.ts), so the document
 * says so. (Same rewrite as the gateway's document.)
 */
const advertiseOwnDecodeErrors = (spec: Record<string, any>): Record<string, any> => {
  const decodeRef = "#/components/schemas/HttpApiDecodeError"
  const json = JSON.stringify(spec, (key, value) => {
    if (key !== "schema" || !Array.isArray(value?.anyOf)) return value
    const rest = value.anyOf.filter((s: any) => s.$ref !== decodeRef)
    return rest.length === value.anyOf.length ? value : rest.length === 1 ? rest[0] : { ...value, anyOf: rest }
  })
  const out = JSON.parse(json)
  delete out.components?.schemas?.HttpApiDecodeError
  for (const path of Object.values(out.paths as Record<string, unknown>)) {
    for (const op of Object.values(path as Record<string, any>)) {
      const bad = op?.responses?.["400"]
      if (bad !== undefined) bad.description = "The request is malformed (the message names the field), or the operation refused it"
    }
  }
  return out
}

export const WORKSPACE_PREFIX = "/workspace"
export const WORKSPACE_OPENAPI_PATH = `${WORKSPACE_PREFIX}/openapi.json`

export class WorkspaceApi extends HttpApi.make("workspace")
  .add(TenantsGroup)
  .add(TasksGroup)
  .add(DocumentsGroup)
  .add(RecordsGroup)
  .add(GlGroup)
  .add(RegistryGroup)
  .prefix(WORKSPACE_PREFIX)
  // Any request can be malformed; the service may fail or depend on something that does.
  .addError(BadRequestWire)
  .addError(InternalServerErrorWire)
  .addError(BadGatewayWire)
  .addError(ServiceUnavailableWire)
  .addError(GatewayTimeoutWire)
  .annotate(OpenApi.Transform, advertiseOwnDecodeErrors)
  .annotate(OpenApi.Title, "Workspace service")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "The upstream workspace service behind the tenant gateway (selected with SVC_WORKSPACE_URL). Tenant-scoped " +
      "operations take the tenant id in the path and answer 404 for another tenant's records. Every error body " +
      "is `{statusCode, message, error}`, with `currentStatus` or `code` on some 400s."
  )
{}
