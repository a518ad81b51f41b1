import * as ParsedPayload from "../http/input/parsedPayload.js"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Effect from "effect/Effect"
import { GatewayApi } from "../api/Api.js"
import { isMediaType } from "../api/headerValues.js"
import { decodeBase64 } from "../files/base64.js"
import { attachment } from "../http/output/contentDisposition.js"
import { ingestFile, listFiles, openFile } from "../files/operations.js"
import { persistFile } from "../files/pipeline.js"
import { TenantConfig } from "../config/TenantConfig.js"
import { UnsupportedMediaType } from "../api/errors.js"
import { spoolBody } from "../http/input/rawBody.js"
import { currentIdempotencyKey, UploadSpoolDirectory } from "../upstream/WorkspaceClient.js"
import { currentDeadline } from "../services/Deadline.js"
import * as Option from "effect/Option"

/**
 * A document is someone's upload, served from the gateway's origin: the browser must not sniff
 * it into another type, and if it is ever rendered (opened in a tab despite `attachment`), it
 * runs as a sandboxed page of a unique origin with no scripts, forms or loads.
 */
export const DOWNLOAD_HEADERS = {
  "x-content-type-options": "nosniff",
  "content-security-policy": "sandbox; default-src 'none'"
} as const

/** The rules live in ../files/ (operations.ts, pipeline.ts), shared with the agent tool server (src/mcp). */
export const FilesLive = ParsedPayload.group(GatewayApi, "files", (handlers) =>
  handlers
    .handle("listFiles", ({ params, query }) => listFiles(params.taskId, query.source))
    .handle("uploadFile", ({ params, payload: { data, ...meta } }) =>
      Effect.flatMap(decodeBase64("data", data), (bytes) => persistFile(params.taskId, meta, { bytes })))
    .handleRaw("uploadRawFile", ({ params, query, request }) =>
      Effect.scoped(Effect.gen(function*() {
        // Checked before the body was read (src/http/input/crossSite.ts); again here, for an app without that middleware.
        const type = request.headers["content-type"]?.trim()
        if (type === undefined || !isMediaType(type)) {
          return yield* new UnsupportedMediaType({ message: "Content-Type must be the file's media type (type/subtype)" })
        }
        const { maxBodyBytes, requestDeadlineMs } = yield* TenantConfig
        // Only a keyed write fingerprints the bytes: hash them on the way then, not otherwise.
        const keyed = Option.isSome(yield* Effect.service(currentIdempotencyKey))
        const bytes = yield* spoolBody(request, maxBodyBytes, yield* UploadSpoolDirectory, keyed)
        // The request's deadline counts from the body's end, as for bodies read before routing
        // (src/gateway/requestScope.ts): a slow upload spends the server's request timeout.
        const deadline = Option.some({ at: Date.now() + requestDeadlineMs, budgetMs: requestDeadlineMs })
        // octet-stream says nothing of the file, so its name decides, as for a JSON upload without a type.
        const essence = type.split(";", 1)[0]!.trim().toLowerCase()
        const contentType = essence === "application/octet-stream" ? undefined : type
        return yield* Effect.provideService(persistFile(params.taskId, { ...query, contentType }, { bytes }), currentDeadline, deadline)
      })))
    .handle("ingestFile", ({ params, payload }) => ingestFile(params.taskId, payload))
    .handle("downloadFile", ({ params }) =>
      Effect.map(openFile(params.documentRef), ({ body, document }) =>
        HttpServerResponse.stream(body, {
          // A row stored before types were checked at input is still served, as bytes.
          contentType: isMediaType(document.contentType) ? document.contentType : "application/octet-stream",
          contentLength: document.sizeBytes,
          headers: { "content-disposition": attachment(document.filename), ...DOWNLOAD_HEADERS }
        }))))
