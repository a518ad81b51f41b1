/**
 * Task file operations of spec §4 ("Task files") beyond the persist pipeline (./pipeline.ts):
 * listing, ingest by reference and opening a document. Shared by the HTTP handlers
 * (src/handlers/files.ts) and the agent tool server (src/mcp/tools.ts).
 */
import * as Effect from "effect/Effect"
import type { IngestFileDto } from "../api/dtos.js"
import { NotFound } from "../api/errors.js"
import { FILE_LIST_LIMIT } from "../api/files.js"
import type { FileDocument } from "../api/resources.js"
import { FileFetcher } from "./FileFetcher.js"
import { Tenant } from "../services/Tenant.js"
import { WorkspaceClient } from "../upstream/WorkspaceClient.js"
import { downloadUrl } from "./downloadUrl.js"
import { requireSignalName } from "../services/signals.js"
import { persistFile, type PersistOptions } from "./pipeline.js"

/** Up to FILE_LIST_LIMIT documents of the task, newest first, optionally of one source. */
export const listFiles = (taskId: string, source: string | undefined) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const { task, tenant } = yield* (yield* Tenant).requireTask(taskId)
    const docs = yield* workspace.listDocuments(tenant.id, task.id, { source, limit: FILE_LIST_LIMIT })
    return docs.map((doc): FileDocument => ({
      id: doc.id,
      filename: doc.filename,
      contentType: doc.contentType,
      uploadedAt: doc.uploadedAt,
      downloadUrl: downloadUrl(taskId, doc.id)
    }))
  })

/** The gateway fetches the bytes itself (the task checked first), then persists and signals. */
export const ingestFile = (taskId: string, { fileRef, ...meta }: IngestFileDto, options: PersistOptions = {}) =>
  Effect.gen(function*() {
    const fetcher = yield* FileFetcher
    // Before the fetch: a refused name fetches nothing (persistFile judges it again for the other routes).
    yield* requireSignalName(meta.signalName)
    yield* (yield* Tenant).requireTask(taskId)
    // The fetched bytes are held until persisted: both in one fetch slot (memory is budgeted).
    return yield* fetcher.withFetchSlot(
      fileRef,
      Effect.flatMap(fetcher.fetch(fileRef), (fetched) => persistFile(taskId, meta, fetched, options))
    )
  })

/** A document of this tenant (its record and a stream of its bytes); 404 otherwise. */
export const openFile = (documentRef: string) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const tenant = yield* (yield* Tenant).current
    return yield* workspace.openDocument(tenant.id, documentRef).pipe(
      Effect.mapError((e) => e._tag === "NotFound" ? new NotFound({ message: `Document ${documentRef} not found` }) : e)
    )
  })
