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
  ForbiddenWire,
  GatewayTimeoutWire,
  InternalServerErrorWire,
  PayloadTooLargeWire,
  ServiceUnavailableWire,
  UnauthorizedWire
} from "./errors.js"
import { EventsGroup } from "./events.js"
import { FilesGroup } from "./files.js"
import { GlGroup } from "./gl.js"
import { HealthGroup } from "./health.js"
import { SubledgersGroup } from "./subledgers.js"
import { declareIdempotencyKey } from "./idempotency.js"
import { advertiseOwnDecodeErrors } from "./openapiTransform.js"
import { TasksGroup } from "./tasks.js"
import { API_VERSION } from "./version.js"

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
  // With the edge's identity configured (SVC_ACTOR_HEADER, SVC_JWT_*), any request can lack or
  // misstate it: 401, or 403 for another tenant's token (src/http/identity.ts). Declared so
  // that clients decode them as Unauthorized / Forbidden rather than as an unexpected status.
  .addError(UnauthorizedWire)
  .addError(ForbiddenWire)
  .addError(PayloadTooLargeWire)
  .addError(InternalServerErrorWire)
  .addError(BadGatewayWire)
  .addError(ServiceUnavailableWire)
  .addError(GatewayTimeoutWire)
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
