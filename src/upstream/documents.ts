import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { ConflictWire, ForbiddenWire, NotFoundWire } from "../api/errors.js"
import { IdempotencyKeyHeaders } from "../api/idempotency.js"
import { FileName, MediaType } from "../api/headerValues.js"
import { TASK_ID_MAX_LENGTH } from "../api/ids.js"
import { CheckedJson } from "../api/jsonValue.js"
import { Document } from "./model.js"
import { IdParam, JsonObject, NonEmpty, StoredText, TenantIdParam, TenantTaskPath } from "./paths.js"

/** The download response carries the Document record in this header (JSON, percent-encoded). */
export const DOCUMENT_HEADER = "x-workspace-document"

export const DocumentListParams = Schema.Struct({
  source: Schema.optional(NonEmpty(256)).annotations({ description: "Only documents of this source" }),
  limit: Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000)).annotations({
    description: "At most this many documents"
  })
})

export const PutDocumentParams = Schema.Struct({
  source: StoredText(256).annotations({ description: "Stable source identifier; workflow activities query by it" }),
  filename: FileName.annotations({ description: "The document's file name" }),
  contentType: MediaType.annotations({ description: "The document's MIME type (the body itself is sent as octet-stream)" }),
  period: Schema.optional(StoredText(16)).annotations({ description: "Accounting period, YYYY-MM" }),
  schemaSlug: Schema.optional(StoredText(128)).annotations({ description: "Extraction schema slug used downstream" }),
  signalTaskId: Schema.optional(StoredText(TASK_ID_MAX_LENGTH)).annotations({ description: "Signal to record with the document: its task" }),
  signalName: Schema.optional(StoredText(128)).annotations({ description: "Signal to record with the document: its name" }),
  signalPayload: Schema.optional(CheckedJson(JsonObject)).annotations({
    description: "Signal payload as a JSON object; the new document's id is added to it as `documentRef`"
  }),
  signalExpectedStep: Schema.optional(StoredText(256)).annotations({
    description: "The step the signal is for: when the task is no longer at it, the write is a 409 naming the current step"
  })
})

export class DocumentsGroup extends HttpApiGroup.make("documents")
  .add(
    HttpApiEndpoint.get("listDocuments", "/tenants/:tenantId/tasks/:taskId/documents")
      .setPath(TenantTaskPath)
      .setUrlParams(DocumentListParams)
      .addSuccess(Schema.Array(Document))
      .annotate(OpenApi.Summary, "List a task's documents")
      .annotate(
        OpenApi.Description,
        "Documents of the (root) task, newest upload first, at most `limit`, optionally only one `source`."
      )
  )
  .add(
    HttpApiEndpoint.post("putDocument", "/tenants/:tenantId/tasks/:taskId/documents")
      .setPath(TenantTaskPath)
      .setUrlParams(PutDocumentParams)
      .setHeaders(IdempotencyKeyHeaders)
      .setPayload(HttpApiSchema.Uint8Array({ contentType: "application/octet-stream" }))
      .addSuccess(Document, { status: 201 })
      .addError(ConflictWire)
      .addError(ForbiddenWire)
      .annotate(OpenApi.Summary, "Store a document")
      .annotate(
        OpenApi.Description,
        "The body is the raw file bytes, sent as `application/octet-stream` (never base64); the metadata is in the " +
          "query. With signalTaskId and signalName, the signal is recorded in the same transaction as the document " +
          "and delivered after it, its payload extended with `documentRef`. 404 when the task is not the tenant's; " +
          "400 when the signal cannot be taken."
      )
  )
  .add(
    HttpApiEndpoint.get("openDocument", "/tenants/:tenantId/documents/:documentId/download")
      .setPath(Schema.Struct({ tenantId: TenantIdParam, documentId: IdParam("Document UUID") }))
      // The stored Content-Type, whatever it is (checked when the document was stored).
      .addSuccess(HttpApiSchema.Uint8Array({ contentType: "*/*" }))
      .annotate(OpenApi.Summary, "Download a document")
      .annotate(
        OpenApi.Description,
        "Streams the stored bytes with the stored Content-Type, Content-Length and `Content-Disposition: " +
          `attachment\`. The \`${DOCUMENT_HEADER}\` header carries the Document record as JSON, percent-encoded ` +
          "(encodeURIComponent). 404 when the document is not the tenant's."
      )
  )
  .addError(NotFoundWire)
  .annotate(OpenApi.Title, "Documents")
  .annotate(OpenApi.Description, "The submitted-documents store: list, store (raw bytes) and stream out")
{}
