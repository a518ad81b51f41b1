/**
 * The agent registry of spec §4 ("related registry operations") and the webhook subscriptions
 * as their own small HttpApi: the workspace service's RegistryGroup and WebhooksGroup under /workspace, with the errors any workspace operation
 * can answer. A client of it pulls in no other workspace operation and no server code.
 */
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiClient from "effect/http-api/HttpApiClient"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as Redacted from "effect/Redacted"
import { UnauthorizedWire } from "../api/errors.js"
import { RegistryGroup } from "../upstream/registry.js"
import { WebhooksGroup } from "../upstream/webhooks.js"
import { withEncodedPaths } from "./encodedPaths.js"
import { withRequestShape } from "./requestShape.js"

export {
  Agent,
  AgentVersion,
  CreateAgentDto,
  CreateAgentVersionDto,
  CreatedAgent
} from "../upstream/registry.js"
export { isNotImplemented, NotImplemented } from "../upstream/errors.js"
export {
  CreatedWebhook,
  CreateWebhookDto,
  RotatedWebhookSecret,
  Webhook,
  WebhookAttempt,
  WebhookDelivery,
  WEBHOOK_EVENT_TYPES
} from "../upstream/webhooks.js"

/**
 * The admin listener's bearer check, as the client sees it: every registry call may answer 401
 * without a valid SVC_ADMIN_TOKEN. Effect 4 has no API-wide errors (Effect 3's `addError`); a
 * middleware's errors are added to each endpoint's. The client runs no middleware of its own.
 */
class AdminBearer extends HttpApiMiddleware.Service<AdminBearer>()("client/AdminBearer", {
  error: UnauthorizedWire
}) {}

/**
 * The registry operations, at the paths the workspace service serves them (`/workspace/registry/...`).
 * Each endpoint declares what any workspace operation can answer (400, 413, 500, 502-504;
 * src/upstream/registry.ts), and 401 from the admin listener (AdminBearer above).
 */
export class RegistryApi extends HttpApi.make("registry").add(RegistryGroup).add(WebhooksGroup).prefix("/workspace")
  .middleware(AdminBearer)
{}

export interface RegistryClientOptions {
  /** Adjusts the HttpClient every request goes through (headers, retries, tracing, ...). */
  readonly transformClient?: ((client: HttpClient.HttpClient) => HttpClient.HttpClient) | undefined
  /** Sent as `Authorization: Bearer <token>`: the admin listener's SVC_ADMIN_TOKEN, when it has one. */
  readonly token?: string | Redacted.Redacted<string> | undefined
}

/**
 * A typed client of the agent registry at `baseUrl`: the admin listener of an embedded gateway
 * (SVC_ADMIN_HOST:SVC_ADMIN_PORT, `http://127.0.0.1:3001` by default; never the gateway's own
 * port) or a workspace service. Needs an HttpClient.
 */
export const makeRegistryClient = (baseUrl: string | URL, options: RegistryClientOptions = {}) => {
  const { token, transformClient } = options
  const withToken = token === undefined
    ? transformClient
    : (client: HttpClient.HttpClient) =>
      HttpClient.mapRequest(
        transformClient === undefined ? client : transformClient(client),
        HttpClientRequest.bearerToken(Redacted.isRedacted(token) ? Redacted.value(token) : token)
      )
  return Effect.map(
    HttpApiClient.make(RegistryApi, { baseUrl: trimBase(baseUrl), transformClient: withToken }),
    (client) => withEncodedPaths(withRequestShape(client))
  )
}

/** `http://host:3000/` and `http://host:3000` both prefix `/v1/...` correctly. */
export const trimBase = (baseUrl: string | URL): string => baseUrl.toString().replace(/\/+$/, "")
