import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { optional } from "./optional.js"
import { IngestFileDto, RawUploadQuery, UploadFileDto } from "./dtos.js"
import { CommonErrors, ConflictWire, NotFoundWire, UnsupportedMediaTypeWire } from "./errors.js"
import { TaskIdInput, UuidInput } from "./ids.js"
import { FileDocument, UploadResult } from "./resources.js"
import { TaskPath } from "./tasks.js"

/** At most this many documents come back from the file list (spec §8). */
export const FILE_LIST_LIMIT = 20

/** The raw upload's route: the body is the file (`uploadRawFile`). */
export const RAW_UPLOAD_PATH = "/tasks/:taskId/files/raw"

/**
 * The header a raw upload must carry, valued `raw`. Its body is not JSON, so the rule that keeps
 * other sites' bodies out (a body must be JSON: a type no simple request can send) cannot hold;
 * a header no simple request can send takes its place (src/http/input/crossSite.ts).
 */
export const RAW_UPLOAD_HEADER = "x-svc-upload"

/** The raw upload's full path, as the router reads it (lower case, decoded, no repeated or trailing slashes). */
export const RAW_UPLOAD_ROUTE = /^\/v1\/tasks\/.+\/files\/raw$/

/**
 * The JSON body fields that carry a file's content as base64, by endpoint (object keys from the
 * body's root). A large one is decoded from the body's bytes, never made a string
 * (src/http/input/base64Literals.ts); its schema, documentation and errors are the field's own.
 */
export const BASE64_FILE_FIELDS: Readonly<Record<"uploadFile" | "ingestFile", ReadonlyArray<ReadonlyArray<string>>>> = {
  uploadFile: [["data"]],
  // The inline_base64 provider's field (src/files/providers/inlineBase64.ts).
  ingestFile: [["fileRef", "data"]]
}

export class FilesGroup extends HttpApiGroup.make("files")
  .add(
    HttpApiEndpoint.get("listFiles", "/tasks/:taskId/files", {
      params: TaskPath,
      query: { source: optional(Schema.String.check(Schema.isMinLength(1))) },
      success: Schema.Array(FileDocument),
      error: [...CommonErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "List task files")
      .annotate(
        OpenApi.Description,
        `Up to ${FILE_LIST_LIMIT} documents of the task, newest upload first, optionally only those of one \`source\`.`
      )
  )
  .add(
    HttpApiEndpoint.post("uploadFile", "/tasks/:taskId/files", {
      params: TaskPath,
      payload: UploadFileDto,
      success: UploadResult.pipe(HttpApiSchema.status(201)),
      error: [...CommonErrors, NotFoundWire, ConflictWire]
    })
      .annotate(OpenApi.Summary, "Upload a file (base64)")
      .annotate(
        OpenApi.Description,
        "Persists the document, then signals `signalName` on `signalTaskId` when both are given. " +
          "Not advertised to agents: they use the ingest path."
      )
  )
  .add(
    HttpApiEndpoint.post("uploadRawFile", RAW_UPLOAD_PATH, {
      params: TaskPath,
      query: RawUploadQuery,
      // Any media type: the file's own. Read as a stream by the handler, never decoded whole.
      payload: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/octet-stream" })),
      success: UploadResult.pipe(HttpApiSchema.status(201)),
      error: [...CommonErrors, NotFoundWire, ConflictWire, UnsupportedMediaTypeWire]
    })
      .annotate(OpenApi.Summary, "Upload a file (raw bytes)")
      .annotate(
        OpenApi.Description,
        "The body is the file itself, its `Content-Type` the file's type (`application/octet-stream`: guessed " +
          "from the file name); the upload's other fields are in the query. The request must carry " +
          `\`${RAW_UPLOAD_HEADER}: raw\` (403 otherwise): a page on another site cannot send it without a CORS ` +
          "preflight, so a simple cross-site POST is never taken for an upload. The bytes stream to the store " +
          "(no base64, no copy of the whole file in memory) under the same size cap as any body (413), accept " +
          "rules, audit event and answer as the JSON upload; the signal follows the commit."
      )
  )
  .add(
    HttpApiEndpoint.post("ingestFile", "/tasks/:taskId/files/ingest", {
      params: TaskPath,
      payload: IngestFileDto,
      success: UploadResult.pipe(HttpApiSchema.status(201)),
      error: [...CommonErrors, NotFoundWire, ConflictWire]
    })
      .annotate(OpenApi.Summary, "Ingest a file by reference")
      .annotate(
        OpenApi.Description,
        "The gateway fetches the bytes itself from `fileRef` (providers: local, url, inline_base64), " +
          "then persists and signals like the upload path."
      )
  )
  .add(
    HttpApiEndpoint.get("downloadFile", "/tasks/:taskId/files/:documentRef/download", {
      params: { taskId: TaskIdInput, documentRef: UuidInput },
      // The stored Content-Type, whatever it is: any media type (checked at upload) may come back.
      success: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "*/*" })),
      error: [...CommonErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "Download a file")
      .annotate(
        OpenApi.Description,
        "Streams the stored bytes with the stored Content-Type and `Content-Disposition: attachment`. " +
          "`taskId` is in the route for symmetry and is not enforced against the document."
      )
  )
  .annotate(OpenApi.Title, "Task files")
  .annotate(OpenApi.Description, "Upload, ingest, list and download a task's documents")
{}
