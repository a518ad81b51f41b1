/**
 * What every gateway request carries to the upstream calls made while serving it:
 *
 * - its deadline (SVC_REQUEST_DEADLINE_MS), counted from here: after the body has been read
 *   (the JSON input check reads it first, ./jsonInput.ts), so a slow upload spends the
 *   request timeout of the Node server, not the upstream budget;
 * - for a write (POST, PUT, PATCH, DELETE), its idempotency key: the client's
 *   `Idempotency-Key` header (400 when it is not 1-255 visible ASCII characters), else one
 *   generated for this request. The WorkspaceClient port passes it on with the write
 *   (src/services/WorkspaceClient.ts).
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import type { BadRequest } from "../api/errors.js"
import { IDEMPOTENCY_KEY_HEADER } from "../api/idempotency.js"
import { withDeadline } from "../services/Deadline.js"
import { withIdempotencyKey } from "../services/WorkspaceClient.js"

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"])

export const requestScope = (deadlineMs: number) =>
<E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E | BadRequest, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const timed = withDeadline(deadlineMs)(app)
    if (!WRITE_METHODS.has(request.method)) return timed
    return withIdempotencyKey(request.headers[IDEMPOTENCY_KEY_HEADER] ?? randomUUID())(timed)
  })
