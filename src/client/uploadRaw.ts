/**
 * The raw upload (`files.uploadRawFile`): the file as its own bytes, no base64. The HttpApi
 * client would send a Uint8Array body with the contract's placeholder type; this sends the
 * file's own Content-Type, the `x-svc-upload: raw` header the gateway requires, and any body
 * the HttpClient can send: bytes, a stream of bytes (Node: a file read as it goes), or, over
 * fetch, a Blob or File as it is (the browser streams it from disk).
 */
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpBody from "effect/http/HttpBody"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import type { RawUploadQuery } from "../api/dtos.js"
import type { ApiError } from "../api/errors.js"
import { RAW_UPLOAD_HEADER } from "../api/files.js"
import { UploadResult } from "../api/resources.js"
import { failOnErrorStatus } from "./download.js"
import { encodePathSegment } from "./pathParams.js"
import { runToPromise } from "./promise.js"
import { trimBase } from "./registry.js"

export interface RawUploadRequest {
  readonly taskId: string
  /** The upload's fields (sent in the query). */
  readonly fields: RawUploadQuery
  /** The file's media type; `application/octet-stream` lets the gateway guess it from the name. */
  readonly contentType: string
  /**
   * The file: bytes, a stream of bytes (give `contentLength` when known), or anything the
   * platform's fetch takes as a body (a Blob or File in a browser).
   */
  readonly body: Uint8Array | Stream.Stream<Uint8Array, unknown> | Blob
  readonly contentLength?: number | undefined
}

/** The raw upload's path with its fields as the query. */
export const rawUploadPath = (taskId: string, fields: RawUploadQuery): string => {
  const query = new URLSearchParams()
  for (const [key, value] of Object.entries(fields)) if (typeof value === "string") query.set(key, value)
  return `/v1/tasks/${encodePathSegment(taskId)}/files/raw?${query}`
}

const bodyOf = (request: RawUploadRequest): HttpBody.HttpBody =>
  request.body instanceof Uint8Array
    ? HttpBody.uint8Array(request.body, request.contentType)
    : typeof Blob !== "undefined" && request.body instanceof Blob
    ? HttpBody.raw(request.body, { contentType: request.contentType, contentLength: request.body.size })
    : HttpBody.stream(request.body as Stream.Stream<Uint8Array, unknown>, request.contentType, request.contentLength)

const decodeResult = Schema.decodeUnknownEffect(UploadResult)

/** POSTs the file; the stored document's UploadResult, or the contract's error. */
export const uploadFileRaw = (
  baseUrl: string | URL,
  request: RawUploadRequest
): Effect.Effect<UploadResult, ApiError | HttpClientError.HttpClientError | Schema.SchemaError, HttpClient.HttpClient> =>
  Effect.flatMap(HttpClient.HttpClient, (client) =>
    client.execute(
      HttpClientRequest.post(trimBase(baseUrl) + rawUploadPath(request.taskId, request.fields)).pipe(
        HttpClientRequest.setHeader(RAW_UPLOAD_HEADER, "raw"),
        HttpClientRequest.setBody(bodyOf(request))
      )
    )).pipe(
      Effect.flatMap(failOnErrorStatus),
      Effect.flatMap((response) => response.json),
      Effect.flatMap(decodeResult)
    )

/**
 * The same over fetch, as a Promise (rejects with the contract's error values, like
 * createGatewayClient's methods). `fetch` replaces globalThis.fetch (the console's reports
 * upload progress); `headers` go with the request.
 */
export const uploadFileRawWithFetch = (
  baseUrl: string | URL,
  request: RawUploadRequest,
  options: { readonly fetch?: typeof globalThis.fetch | undefined; readonly headers?: Readonly<Record<string, string>> | undefined } = {}
): Promise<UploadResult> => {
  const { fetch, headers } = options
  const upload = Effect.flatMap(HttpClient.HttpClient, (client) => {
    const withHeaders = headers === undefined ? client : HttpClient.mapRequest(client, HttpClientRequest.setHeaders(headers))
    return Effect.provideService(uploadFileRaw(baseUrl, request), HttpClient.HttpClient, withHeaders)
  })
  const withFetch = fetch === undefined ? upload : Effect.provideService(upload, FetchHttpClient.Fetch, fetch)
  return runToPromise(withFetch.pipe(Effect.provide(FetchHttpClient.layer)))
}
