import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { optional } from "./optional.js"
import { IngestFileDto, UploadFileDto } from "./dtos.js"
import { CommonErrors, ConflictWire, NotFoundWire } from "./errors.js"
import { TaskId, Uuid } from "./ids.js"
import { FileDocument, UploadResult } from "./resources.js"
import { TaskPath } from "./tasks.js"

/** At most this many documents come back from the file list (spec §8). */
export const FILE_LIST_LIMIT = 20

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
      params: { taskId: TaskId, documentRef: Uuid },
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
