/**
 * The agent registry of spec §4 ("related registry operations") as its own small HttpApi: the
 * workspace service's RegistryGroup under /workspace, with the errors any workspace operation
 * can answer. A client of it pulls in no other workspace operation and no server code.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import {
  BadGatewayWire,
  BadRequestWire,
  GatewayTimeoutWire,
  InternalServerErrorWire,
  ServiceUnavailableWire,
  UnauthorizedWire
} from "../api/errors.js"
import { RegistryGroup } from "../upstream/registry.js"
import { withEncodedPaths } from "./encodedPaths.js"

export {
  Agent,
  AgentVersion,
  CreateAgentDto,
  CreateAgentVersionDto,
  CreatedAgent
} from "../upstream/registry.js"
export { isNotImplemented, NotImplemented } from "../upstream/errors.js"

/**
 * The registry operations, at the paths the workspace service serves them (`/workspace/registry/...`).
 * 401 is the admin listener's answer without a valid bearer token (SVC_ADMIN_TOKEN).
 */
export class RegistryApi extends HttpApi.make("registry")
  .add(RegistryGroup)
  .prefix("/workspace")
  .addError(BadRequestWire)
  .addError(UnauthorizedWire)
  .addError(InternalServerErrorWire)
  .addError(BadGatewayWire)
  .addError(ServiceUnavailableWire)
  .addError(GatewayTimeoutWire)
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
  return Effect.map(HttpApiClient.make(RegistryApi, { baseUrl: trimBase(baseUrl), transformClient: withToken }), withEncodedPaths)
}

/** `http://host:3000/` and `http://host:3000` both prefix `/v1/...` correctly. */
export const trimBase = (baseUrl: string | URL): string => baseUrl.toString().replace(/\/+$/, "")
