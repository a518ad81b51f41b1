/**
 * The workspace service's contract, as the gateway consumes it: one endpoint per
 * WorkspaceClient method, plus the agent registry, the GL adapter's webhook and the outbound
 * webhook subscriptions (admin listener). Its OpenAPI
 * document (GET /workspace/openapi.json, docs/workspace-openapi.json) is what a team implements
 * in front of their own workspace service. Imports no implementation.
 *
 * Tenant-scoped paths carry the tenant id; another tenant's record answers exactly like a
 * missing one (404). Every error body is `{statusCode, message, error}` (plus currentStatus or
 * code on some 400s).
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as OpenApi from "effect/http-api/OpenApi"
import { ANSWER_PARSE_OPTIONS, PARSE_OPTIONS, PAYLOAD_PARSE_OPTIONS } from "../api/dtos.js"
import { advertiseOwnDecodeErrors } from "../api/openapiTransform.js"
import { API_VERSION } from "../api/version.js"
import { DocumentsGroup } from "./documents.js"
import { GlGroup } from "./gl.js"
import { InboxGroup } from "./inbox.js"
import { RecordsGroup } from "./records.js"
import { RegistryGroup } from "./registry.js"
import { TasksGroup } from "./tasks.js"
import { TenantsGroup } from "./tenants.js"
import { WebhooksGroup } from "./webhooks.js"

export const WORKSPACE_PREFIX = "/workspace"
export const WORKSPACE_OPENAPI_PATH = `${WORKSPACE_PREFIX}/openapi.json`

export class WorkspaceApi extends HttpApi.make("workspace")
  .add(TenantsGroup)
  .add(TasksGroup)
  .add(InboxGroup)
  .add(DocumentsGroup)
  .add(RecordsGroup)
  .add(GlGroup)
  .add(RegistryGroup)
  .add(WebhooksGroup)
  .prefix(WORKSPACE_PREFIX)
  // Errors any request can meet are declared on each endpoint (paths.ts, WorkspaceErrors).
  .annotate(HttpApi.ParseOptions, PARSE_OPTIONS)
  .annotate(HttpApi.PayloadParseOptions, PAYLOAD_PARSE_OPTIONS)
  .annotate(HttpApi.SuccessParseOptions, ANSWER_PARSE_OPTIONS)
  .annotate(HttpApi.ErrorParseOptions, ANSWER_PARSE_OPTIONS)
  .annotate(OpenApi.Transform, advertiseOwnDecodeErrors)
  .annotate(OpenApi.Title, "Workspace service")
  .annotate(OpenApi.Version, API_VERSION)
  .annotate(
    OpenApi.Description,
    "The upstream workspace service behind the tenant gateway (selected with SVC_WORKSPACE_URL). Tenant-scoped " +
      "operations take the tenant id in the path and answer 404 for another tenant's records. Every error body " +
      "is `{statusCode, message, error}`, with `currentStatus` or `code` on some 400s."
  )
{}
