/**
 * Streaming download. The HttpApi endpoint `files.downloadFile` decodes the whole body into
 * one Uint8Array; for large documents this returns the response instead, so the caller can
 * stream `response.stream` wherever it likes. Error bodies decode to the contract's errors.
 */
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import {
  type ApiError,
  BadGatewayWire,
  BadRequestWire,
  ConflictWire,
  GatewayTimeoutWire,
  InternalServerErrorWire,
  NotFoundWire,
  PayloadTooLargeWire,
  ServiceUnavailableWire,
  UnauthorizedWire
} from "../api/errors.js"
import { encodePathSegment } from "./pathParams.js"
import { trimBase } from "./registry.js"

const ErrorBody = Schema.Union([
  BadRequestWire,
  UnauthorizedWire,
  NotFoundWire,
  ConflictWire,
  PayloadTooLargeWire,
  InternalServerErrorWire,
  BadGatewayWire,
  ServiceUnavailableWire,
  GatewayTimeoutWire
])
const decodeErrorBody = Schema.decodeUnknownOption(ErrorBody)

/** A non-2xx response as the contract's error, or an HttpClientError (StatusCodeError) when its body is not one. */
export const failOnErrorStatus = (
  response: HttpClientResponse.HttpClientResponse
): Effect.Effect<HttpClientResponse.HttpClientResponse, ApiError | HttpClientError.HttpClientError> =>
  response.status >= 200 && response.status < 300
    ? Effect.succeed(response)
    : response.json.pipe(
      Effect.option,
      Effect.flatMap((body): Effect.Effect<never, ApiError | HttpClientError.HttpClientError> =>
        Option.match(Option.flatMap(body, decodeErrorBody), {
          onSome: (error): Effect.Effect<never, ApiError | HttpClientError.HttpClientError> => Effect.fail(error as ApiError),
          onNone: () =>
            Effect.fail(
              new HttpClientError.HttpClientError({
                reason: new HttpClientError.StatusCodeError({
                  request: response.request,
                  response,
                  description: `unexpected status ${response.status}`
                })
              })
            )
        })
      )
    )

/** The download endpoint's path for a document (the same path file documents carry as downloadUrl). */
export const downloadPath = (taskId: string, documentRef: string): string =>
  `/v1/tasks/${encodePathSegment(taskId)}/files/${encodePathSegment(documentRef)}/download`

/**
 * GET the document's bytes; succeeds with the 2xx response, whose `stream` the caller consumes
 * (interrupting the fiber aborts the transfer). Content-Type and Content-Disposition are on `response.headers`.
 */
export const downloadFile = (
  baseUrl: string | URL,
  request: { readonly taskId: string; readonly documentRef: string }
): Effect.Effect<
  HttpClientResponse.HttpClientResponse,
  ApiError | HttpClientError.HttpClientError,
  HttpClient.HttpClient
> =>
  HttpClient.HttpClient.pipe(
    Effect.flatMap((client) =>
      client.execute(HttpClientRequest.get(trimBase(baseUrl) + downloadPath(request.taskId, request.documentRef)))
    ),
    Effect.flatMap(failOnErrorStatus)
  )
