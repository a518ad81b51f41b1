/**
 * The agent registry of spec §4 ("related registry operations") as its own small HttpApi: the
 * workspace service's RegistryGroup under /workspace, with the errors any workspace operation
 * can answer. A client of it pulls in no other workspace operation and no server code.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import {
  BadGatewayWire,
  BadRequestWire,
  GatewayTimeoutWire,
  InternalServerErrorWire,
  ServiceUnavailableWire
} from "../api/errors.js"
import { RegistryGroup } from "../workspace/api/registry.js"

export {
  Agent,
  AgentVersion,
  CreateAgentDto,
  CreateAgentVersionDto,
  CreatedAgent
} from "../workspace/api/registry.js"
export { isNotImplemented, NotImplemented } from "../workspace/api/errors.js"

/** The registry operations, at the paths the workspace service serves them (`/workspace/registry/...`). */
export class RegistryApi extends HttpApi.make("registry")
  .add(RegistryGroup)
  .prefix("/workspace")
  .addError(BadRequestWire)
  .addError(InternalServerErrorWire)
  .addError(BadGatewayWire)
  .addError(ServiceUnavailableWire)
  .addError(GatewayTimeoutWire)
{}

/**
 * A typed client of the agent registry at `baseUrl`: the workspace service, or in embedded mode
 * the gateway process itself (it serves /workspace on the same port). Needs an HttpClient.
 */
export const makeRegistryClient = (
  baseUrl: string | URL,
  options: { readonly transformClient?: ((client: HttpClient.HttpClient) => HttpClient.HttpClient) | undefined } = {}
) => HttpApiClient.make(RegistryApi, { baseUrl: trimBase(baseUrl), transformClient: options.transformClient })

/** `http://host:3000/` and `http://host:3000` both prefix `/v1/...` correctly. */
export const trimBase = (baseUrl: string | URL): string => baseUrl.toString().replace(/\/+$/, "")
