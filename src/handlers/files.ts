import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import { GatewayApi } from "../api/Api.js"
import { NotFound } from "../api/errors.js"
import { isMediaType } from "../api/headerValues.js"
import { FILE_LIST_LIMIT } from "../api/files.js"
import { decodeBase64 } from "../files/base64.js"
import { attachment } from "../files/contentDisposition.js"
import { downloadUrl } from "../files/downloadUrl.js"
import { persistFile } from "../files/pipeline.js"
import { FileFetcher } from "../services/FileFetcher.js"
import { Tenant } from "../services/Tenant.js"
import { WorkspaceClient } from "../services/WorkspaceClient.js"

export const FilesLive = HttpApiBuilder.group(GatewayApi, "files", (handlers) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const tenants = yield* Tenant
    const fetcher = yield* FileFetcher

    return handlers
      .handle("listFiles", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const { task, tenant } = yield* tenants.requireTask(path.taskId)
          const docs = yield* workspace.listDocuments(tenant.id, task.id, { source: urlParams.source, limit: FILE_LIST_LIMIT })
          return docs.map((doc) => ({
            id: doc.id,
            filename: doc.filename,
            contentType: doc.contentType,
            uploadedAt: doc.uploadedAt,
            downloadUrl: downloadUrl(path.taskId, doc.id)
          }))
        }))
      .handle("uploadFile", ({ path, payload: { data, ...meta } }) =>
        Effect.flatMap(decodeBase64("data", data), (bytes) => persistFile(path.taskId, meta, { bytes })))
      .handle("ingestFile", ({ path, payload: { fileRef, ...meta } }) =>
        // The task is checked before the gateway fetches anything on its behalf.
        tenants.requireTask(path.taskId).pipe(
          Effect.zipRight(fetcher.fetch(fileRef)),
          Effect.flatMap((fetched) => persistFile(path.taskId, meta, fetched))
        ))
      .handle("downloadFile", ({ path }) =>
        Effect.gen(function*() {
          const tenant = yield* tenants.current
          const { body, document } = yield* workspace.openDocument(tenant.id, path.documentRef).pipe(
            Effect.mapError((e) => e._tag === "NotFound" ? new NotFound({ message: `Document ${path.documentRef} not found` }) : e)
          )
          return HttpServerResponse.stream(body, {
            // A row stored before types were checked at input is still served, as bytes.
            contentType: isMediaType(document.contentType) ? document.contentType : "application/octet-stream",
            contentLength: document.sizeBytes,
            headers: { "content-disposition": attachment(document.filename) }
          })
        }))
  }))
