import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { IngestFileDto, UploadFileDto } from "./dtos.js"
import { ConflictWire, ForbiddenWire, NotFoundWire } from "./errors.js"
import { TaskId, Uuid } from "./ids.js"
import { FileDocument, UploadResult } from "./resources.js"
import { TaskPath } from "./tasks.js"

/** At most this many documents come back from the file list (spec §8). */
export const FILE_LIST_LIMIT = 20

export class FilesGroup extends HttpApiGroup.make("files")
  .add(
    HttpApiEndpoint.get("listFiles", "/tasks/:taskId/files")
      .setPath(TaskPath)
      .setUrlParams(Schema.Struct({ source: Schema.optional(Schema.String.pipe(Schema.minLength(1))) }))
      .addSuccess(Schema.Array(FileDocument))
      .annotate(OpenApi.Summary, "List task files")
      .annotate(
        OpenApi.Description,
        `Up to ${FILE_LIST_LIMIT} documents of the task, newest upload first, optionally only those of one \`source\`.`
      )
  )
  .add(
    HttpApiEndpoint.post("uploadFile", "/tasks/:taskId/files")
      .setPath(TaskPath)
      .setPayload(UploadFileDto)
      .addSuccess(UploadResult, { status: 201 })
      .addError(ConflictWire)
      .addError(ForbiddenWire)
      .annotate(OpenApi.Summary, "Upload a file (base64)")
      .annotate(
        OpenApi.Description,
        "Persists the document, then signals `signalName` on `signalTaskId` when both are given. " +
          "Not advertised to agents: they use the ingest path."
      )
  )
  .add(
    HttpApiEndpoint.post("ingestFile", "/tasks/:taskId/files/ingest")
      .setPath(TaskPath)
      .setPayload(IngestFileDto)
      .addSuccess(UploadResult, { status: 201 })
      .addError(ConflictWire)
      .addError(ForbiddenWire)
      .annotate(OpenApi.Summary, "Ingest a file by reference")
      .annotate(
        OpenApi.Description,
        "The gateway fetches the bytes itself from `fileRef` (providers: local, url, inline_base64), " +
          "then persists and signals like the upload path."
      )
  )
  .add(
    HttpApiEndpoint.get("downloadFile", "/tasks/:taskId/files/:documentRef/download")
      .setPath(Schema.Struct({ taskId: TaskId, documentRef: Uuid }))
      // The stored Content-Type, whatever it is: any media type (checked at upload) may come back.
      .addSuccess(HttpApiSchema.Uint8Array({ contentType: "*/*" }))
      .annotate(OpenApi.Summary, "Download a file")
      .annotate(
        OpenApi.Description,
        "Streams the stored bytes with the stored Content-Type and `Content-Disposition: attachment`. " +
          "`taskId` is in the route for symmetry and is not enforced against the document."
      )
  )
  .addError(NotFoundWire)
  .annotate(OpenApi.Title, "Task files")
  .annotate(OpenApi.Description, "Upload, ingest, list and download a task's documents")
{}
