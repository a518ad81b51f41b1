/**
 * The one persist-then-signal pipeline that upload and ingest share: name and type the bytes,
 * store them with the signal that must follow, describe the result.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { FileMeta } from "../api/dtos.js"
import { BadRequest } from "../api/errors.js"
import { acceptedTypes, isAccepted } from "../api/fileAccept.js"
import { fileNameProblem, isMediaType, MAX_FILE_NAME_LENGTH, neutraliseInvisible } from "../api/headerValues.js"
import type { UploadResult } from "../api/resources.js"
import type { FetchedFile } from "./FileFetcher.js"
import { guessType } from "./mimeType.js"
import { Tenant } from "../services/Tenant.js"
import { type Workspace, WorkspaceClient } from "../upstream/WorkspaceClient.js"
import type { SpooledBytes } from "../upstream/model.js"
import { FILE_SUBMITTED_SIGNAL } from "../api/stepSignals.js"
import { firstChars } from "../api/textLength.js"
import { requireSignalName, signalFrom } from "../services/signals.js"
import { ringAfterSignal } from "../services/TaskEventBell.js"
import { downloadUrl } from "./downloadUrl.js"

const FALLBACK_TYPE = "application/octet-stream"

/**
 * A name the source gave, made a valid file name: control characters, separators, bidirectional
 * controls and other invisible format characters → `_` (the caller did not choose this name, so
 * it is neutralised rather than refused).
 */
const sourceFileName = (name: string | undefined): string | undefined => {
  if (name === undefined) return undefined
  // Cut by characters: a cut through a surrogate pair left half of it, and the name was dropped.
  const clean = firstChars(
    neutraliseInvisible(name).replace(/[\u0000-\u001f\u007f-\u009f/\\]/g, "_").replace(/[\uD800-\uDFFF]/gu, "\uFFFD"),
    MAX_FILE_NAME_LENGTH
  )
  return fileNameProblem(clean) === undefined ? clean : undefined
}

/**
 * Override, else the source's own name, else `<source>-<timestamp>`. The override was checked
 * at decode; a name from the source is made valid here, so the stored name is the served one.
 */
export const fileNameFor = (meta: FileMeta, fetched: Pick<FetchedFile, "fileName">, now: Date): string =>
  meta.fileName ?? sourceFileName(fetched.fileName) ??
    sourceFileName(`${meta.source}-${now.toISOString().replace(/[:.]/g, "-")}`) ?? "file"

/** The DTO's type, else a guess from the name, else what the source claimed if servable. */
export const contentTypeFor = (meta: FileMeta, fetched: Pick<FetchedFile, "contentType">, fileName: string): string =>
  meta.contentType ?? guessType(fileName) ??
    (fetched.contentType !== undefined && isMediaType(fetched.contentType) ? fetched.contentType : FALLBACK_TYPE)

/** Internal options of a write, never part of a /v1 DTO. */
export interface PersistOptions {
  /**
   * The step the signal is for (the agent tool server passes the step whose assignment it
   * checked): if the task is no longer at it when the write commits, the write is a 409.
   */
  readonly expectedStep?: string | undefined
}

/**
 * A file signal (`file_submitted`) completes the FILE_UPLOAD step current on its task: that
 * step's `displayHint.config.accept` must admit the document, or nothing is stored (400 naming
 * the accepted types). The console decides with the same function (../api/fileAccept.ts). A task
 * the lookup cannot find is left to the write, which answers for it.
 */
const checkAccepted = (tenantId: string, signal: Workspace.Signal, filename: string, contentType: string) =>
  Effect.gen(function*() {
    if (signal.name !== FILE_SUBMITTED_SIGNAL) return
    const workspace = yield* WorkspaceClient
    const next = yield* workspace.getNextStep(tenantId, signal.taskId).pipe(
      Effect.catchTag("NotFound", () => Effect.succeed(undefined))
    )
    const step = next?.step
    if (step == null || step.displayHint.component !== "FILE_UPLOAD") return
    const accepted = acceptedTypes(step.displayHint.config)
    if (isAccepted({ name: filename, type: contentType }, accepted)) return
    return yield* new BadRequest({
      message: `contentType: ${contentType} (file "${filename}") is not accepted by step "${step.id}"; ` +
        `accepted types: ${accepted.join(", ")}`
    })
  })

/**
 * The task is read once, by the write itself: putDocument is scoped to the tenant and answers
 * NotFound (`Task <id> not found`, as Tenant.requireTask does) for another tenant's or a missing
 * task. Only then is the task looked up on its own: if the cached tenant was stale
 * (requireTask refreshes it), the write runs once more for the refreshed tenant.
 */
/** What is persisted: fetched bytes, or a raw upload's spooled to disk as they arrived. */
export type PersistedFile = Omit<FetchedFile, "bytes"> & { readonly bytes: Uint8Array | SpooledBytes }

export const persistFile = (taskId: string, meta: FileMeta, fetched: PersistedFile, options: PersistOptions = {}) =>
  Effect.gen(function*() {
    yield* requireSignalName(meta.signalName)
    const tenants = yield* Tenant
    const tenant = yield* tenants.current
    const workspace = yield* WorkspaceClient
    const filename = fileNameFor(meta, fetched, new Date())
    const contentType = contentTypeFor(meta, fetched, filename)
    // The workspace adds the new document's id to the payload as `documentRef`.
    const signal = signalFrom(meta, {
      source: meta.source,
      filename,
      contentType
    }, options.expectedStep)
    // Checked per tenant id: a stale cached tenant is refreshed below and checked again.
    const put = (tenantId: string) =>
      Effect.andThen(
        Option.isSome(signal) ? checkAccepted(tenantId, signal.value, filename, contentType) : Effect.void,
        workspace.putDocument(tenantId, {
          taskId,
          source: meta.source,
          filename,
          contentType,
          period: meta.period,
          schemaSlug: meta.schemaSlug,
          bytes: fetched.bytes
        }, signal)
      )
    const doc = yield* put(tenant.id).pipe(
      Effect.catchTag("NotFound", (notFound) =>
        Effect.flatMap(tenants.requireTask(taskId), (found) =>
          found.tenant.id === tenant.id ? Effect.fail(notFound) : put(found.tenant.id)))
    )
    yield* ringAfterSignal(Option.getOrUndefined(signal)?.taskId)
    const result: UploadResult = {
      documentRef: doc.id,
      taskId: doc.taskId,
      source: doc.source,
      filename: doc.filename,
      contentType: doc.contentType,
      sizeBytes: doc.sizeBytes,
      uploadedAt: doc.uploadedAt,
      downloadUrl: downloadUrl(doc.taskId, doc.id),
      signaled: Option.isSome(signal)
    }
    return result
  })
