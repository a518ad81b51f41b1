/**
 * The gateway's typed client for integrations, derived from the HttpApi contract. It imports
 * the contract (src/api) and the registry's contract only: no server, handler or workspace
 * implementation module is loaded by importing it (test/cli/clientImports.test.ts checks).
 *
 * - `makeGatewayClient(baseUrl)`: the Effect client (`HttpApiClient.make(GatewayApi, {baseUrl})`);
 *   provide any HttpClient (FetchHttpClient, NodeHttpClient, ...).
 * - `createGatewayClient(baseUrl)`: the same methods returning Promises, over fetch.
 * - `makeRegistryClient(workspaceUrl)` / `createRegistryClient(workspaceUrl)`: the agent registry.
 * - `downloadFile(baseUrl, {taskId, documentRef})`: a download as a streaming response.
 * - `uploadFileRaw(baseUrl, {taskId, fields, contentType, body})`: a file sent as its own bytes
 *   (`uploadFileRawWithFetch`: the same as a Promise over fetch).
 * - Every schema and error of the contract, re-exported.
 */
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpApiClient from "effect/http-api/HttpApiClient"
import { GatewayApi } from "../api/Api.js"
import { withEncodedPaths } from "./encodedPaths.js"
import { type PromiseClient, toPromiseClient } from "./promise.js"
import { makeRegistryClient, trimBase } from "./registry.js"
import { withRequestShape } from "./requestShape.js"
import { withOptionalTaskListParams } from "./taskList.js"

export * from "../api/index.js"
export { downloadFile, downloadPath, failOnErrorStatus } from "./download.js"
export { type PromiseClient, runToPromise, toPromiseClient } from "./promise.js"
export { type RawUploadRequest, rawUploadPath, uploadFileRaw, uploadFileRawWithFetch } from "./uploadRaw.js"
export { isTerminalStatus, TERMINAL_STATUSES } from "../api/taskListing.js"
export { nextTaskCursor } from "./taskList.js"
export {
  Agent,
  AgentVersion,
  CreateAgentDto,
  CreateAgentVersionDto,
  CreatedAgent,
  isNotImplemented,
  makeRegistryClient,
  NotImplemented,
  RegistryApi
} from "./registry.js"

export interface ClientOptions {
  /** Adjusts the HttpClient every request goes through (headers, retries, tracing, ...). */
  readonly transformClient?: ((client: HttpClient.HttpClient) => HttpClient.HttpClient) | undefined
}

/**
 * The typed Effect client of the gateway's /v1 API at `baseUrl` (e.g. `http://127.0.0.1:3000`).
 * Path parameters are percent-encoded (one segment each), so no id can address another resource.
 */
export const makeGatewayClient = (baseUrl: string | URL, options: ClientOptions = {}) =>
  Effect.map(
    HttpApiClient.make(GatewayApi, { baseUrl: trimBase(baseUrl), transformClient: options.transformClient }),
    (client) => withOptionalTaskListParams(withEncodedPaths(withRequestShape(client)))
  )

export type GatewayClient = Effect.Success<ReturnType<typeof makeGatewayClient>>
export type RegistryClient = Effect.Success<ReturnType<typeof makeRegistryClient>>

export interface PromiseClientOptions {
  /** Sent with every request, e.g. the credentials the edge in front of the gateway expects. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** The fetch implementation; default `globalThis.fetch`. */
  readonly fetch?: typeof globalThis.fetch | undefined
}

const fetchClient = <C>(make: (options: ClientOptions) => Effect.Effect<C, never, HttpClient.HttpClient>, options: PromiseClientOptions): C => {
  const { fetch, headers } = options
  const withHeaders = headers === undefined
    ? (client: HttpClient.HttpClient) => client
    : HttpClient.mapRequest(HttpClientRequest.setHeaders(headers))
  // The fetch client reads FetchHttpClient.Fetch when a request is sent: every request gets it.
  const transformClient = fetch === undefined
    ? withHeaders
    : (client: HttpClient.HttpClient) =>
      HttpClient.transformResponse(withHeaders(client), (response) => Effect.provideService(response, FetchHttpClient.Fetch, fetch))
  // Building the client is synchronous: the fetch client layer has no resources.
  return Effect.runSync(make({ transformClient }).pipe(Effect.provide(FetchHttpClient.layer)))
}

/**
 * The gateway client with Promise-returning methods, over fetch:
 *
 *     const gw = createGatewayClient("http://127.0.0.1:3000")
 *     const entities = await gw.entities.listEntities()
 */
export const createGatewayClient = (
  baseUrl: string | URL,
  options: PromiseClientOptions = {}
): PromiseClient<GatewayClient> => toPromiseClient(fetchClient((o) => makeGatewayClient(baseUrl, o), options))

/** The agent registry client with Promise-returning methods, over fetch. */
export const createRegistryClient = (
  workspaceUrl: string | URL,
  options: PromiseClientOptions = {}
): PromiseClient<RegistryClient> => toPromiseClient(fetchClient((o) => makeRegistryClient(workspaceUrl, o), options))
