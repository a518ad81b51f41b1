/**
 * The gateway's whole /v1 contract. Imports no implementation: the OpenAPI document,
 * the typed client and the CLI derive from this value alone.
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as OpenApi from "effect/http-api/OpenApi"
import { DataGroup } from "./data.js"
import { ANSWER_PARSE_OPTIONS, PARSE_OPTIONS, PAYLOAD_PARSE_OPTIONS } from "./dtos.js"
import { EntitiesGroup } from "./entities.js"
import { EventsGroup } from "./events.js"
import { FilesGroup } from "./files.js"
import { GlGroup } from "./gl.js"
import { HealthGroup } from "./health.js"
import { InboxGroup } from "./inbox.js"
import { SubledgersGroup } from "./subledgers.js"
import { declareIdempotencyKey } from "./idempotency.js"
import { advertiseOwnDecodeErrors } from "./openapiTransform.js"
import { TasksGroup } from "./tasks.js"
import { API_VERSION } from "./version.js"

// The errors any request can meet (malformed, too large, the edge's identity, upstream trouble)
// are declared on every endpoint (errors.ts, CommonErrors): Effect 4 has no API-wide errors.
export class GatewayApi extends HttpApi.make("gateway")
  .add(HealthGroup)
  .add(EntitiesGroup)
  .add(TasksGroup)
  .add(InboxGroup)
  .add(EventsGroup)
  .add(FilesGroup)
  .add(DataGroup)
  .add(SubledgersGroup)
  .add(GlGroup)
  .prefix("/v1")
  .annotate(HttpApi.ParseOptions, PARSE_OPTIONS)
  .annotate(HttpApi.PayloadParseOptions, PAYLOAD_PARSE_OPTIONS)
  .annotate(HttpApi.SuccessParseOptions, ANSWER_PARSE_OPTIONS)
  .annotate(HttpApi.ErrorParseOptions, ANSWER_PARSE_OPTIONS)
  // Every write takes an optional Idempotency-Key header (read by the middleware, ./idempotency.ts).
  .annotate(OpenApi.Transform, (spec) => declareIdempotencyKey(advertiseOwnDecodeErrors(spec)))
  .annotate(OpenApi.Title, "Tenant gateway")
  .annotate(OpenApi.Version, API_VERSION)
  .annotate(
    OpenApi.Description,
    "A tenant-scoped gateway: one process per tenant, bound by SVC_TENANT_SLUG. Every error body is " +
      "`{statusCode, message, error}`."
  )
{}
