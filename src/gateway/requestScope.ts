/**
 * What every gateway request carries to the upstream calls made while serving it:
 *
 * - its deadline (SVC_REQUEST_DEADLINE_MS), counted from here: after the body has been read
 *   (the JSON input check reads it first, src/http/input/jsonInput.ts), so a slow upload spends the
 *   request timeout of the Node server, not the upstream budget;
 * - for a write (POST, PUT, PATCH, DELETE), the client's `Idempotency-Key` header (400 when it
 *   is not 1-255 visible ASCII characters). The WorkspaceClient port passes it on with the write
 *   (src/upstream/WorkspaceClient.ts). Without one, nothing is set here: the HTTP workspace
 *   client generates a key for each write and reuses it for that write's retries (the only
 *   retries a key-less request has), and an in-process store, which the gateway never retries
 *   after a commit, stores no key that nobody could ever send again (measured: the fingerprint
 *   and key row were ~10% of a 1 MiB upload's CPU; bench/PROFILE.md).
 */
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { BadRequest } from "../api/errors.js"
import { IDEMPOTENCY_KEY_HEADER } from "../api/idempotency.js"
import { currentDeadline, withDeadlineNow } from "../services/Deadline.js"
import { withIdempotencyKey } from "../upstream/WorkspaceClient.js"

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"])

export const requestScope = (deadlineMs: number) =>
<E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E | BadRequest, R | HttpServerRequest.HttpServerRequest> =>
  // withFiber, not flatMap: read at once, without an effect and a continuation per request.
  Effect.withFiber((fiber) => {
    const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
    const timed = withDeadlineNow(fiber.getRef(currentDeadline), deadlineMs, app)
    if (!WRITE_METHODS.has(request.method)) return timed
    const key = request.headers[IDEMPOTENCY_KEY_HEADER]
    return key === undefined ? timed : withIdempotencyKey(key)(timed)
  })
