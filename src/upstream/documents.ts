import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { intBetween } from "../api/decimalInt.js"
import { optional } from "../api/optional.js"
import { ConflictWire, ForbiddenWire, NotFoundWire } from "../api/errors.js"
import { IdempotencyKeyHeaders } from "../api/idempotency.js"
import { FileName, MediaType } from "../api/headerValues.js"
import { TASK_ID_MAX_LENGTH, withUuidFolded } from "../api/ids.js"
import { CheckedJson } from "../api/jsonValue.js"
import { Document } from "./model.js"
import { IdParam, JsonObject, NonEmpty, StoredText, TenantIdParam, TenantTaskPath, WorkspaceErrors } from "./paths.js"

/** The download response carries the Document record in this header (JSON, percent-encoded). */
export const DOCUMENT_HEADER = "x-workspace-document"

export const DocumentListParams = Schema.Struct({
  source: optional(NonEmpty(256).annotate({ description: "Only documents of this source" })),
  limit: intBetween(1, 1000).annotate({
    description: "At most this many documents"
  })
})

export const PutDocumentParams = Schema.Struct({
  source: StoredText(256).annotate({ description: "Stable source identifier; workflow activities query by it" }),
  filename: FileName.annotateKey({ description: "The document's file name" }),
  contentType: MediaType.annotateKey({ description: "The document's MIME type (the body itself is sent as octet-stream)" }),
  period: optional(StoredText(16).annotate({ description: "Accounting period, YYYY-MM" })),
  schemaSlug: optional(StoredText(128).annotate({ description: "Extraction schema slug used downstream" })),
  signalTaskId: optional(withUuidFolded(StoredText(TASK_ID_MAX_LENGTH).annotate({ description: "Signal to record with the document: its task" }))),
  signalName: optional(StoredText(128).annotate({ description: "Signal to record with the document: its name" })),
  // Described on the wire side (a string of JSON), which the document shows.
  signalPayload: optional(CheckedJson(JsonObject).pipe(Schema.annotateEncoded({
    description: "Signal payload as a JSON object; the new document's id is added to it as `documentRef`"
  }))),
  signalExpectedStep: optional(StoredText(256).annotate({
    description: "The step the signal is for: when the task is no longer at it, the write is a 409 naming the current step"
  }))
})

export class DocumentsGroup extends HttpApiGroup.make("documents")
  .add(
    HttpApiEndpoint.get("listDocuments", "/tenants/:tenantId/tasks/:taskId/documents", {
      params: TenantTaskPath,
      query: DocumentListParams,
      success: Schema.Array(Document),
      error: [...WorkspaceErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "List a task's documents")
      .annotate(
        OpenApi.Description,
        "Documents of the (root) task, newest upload first, at most `limit`, optionally only one `source`."
      )
  )
  .add(
    HttpApiEndpoint.post("putDocument", "/tenants/:tenantId/tasks/:taskId/documents", {
      params: TenantTaskPath,
      query: PutDocumentParams,
      headers: IdempotencyKeyHeaders,
      payload: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/octet-stream" })),
      success: Document.pipe(HttpApiSchema.status(201)),
      error: [...WorkspaceErrors, ConflictWire, ForbiddenWire, NotFoundWire]
    })
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
    HttpApiEndpoint.get("openDocument", "/tenants/:tenantId/documents/:documentId/download", {
      // The stored Content-Type, whatever it is (checked when the document was stored).
      params: Schema.Struct({ tenantId: TenantIdParam, documentId: IdParam("Document UUID") }),
      success: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "*/*" })),
      error: [...WorkspaceErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "Download a document")
      .annotate(
        OpenApi.Description,
        "Streams the stored bytes with the stored Content-Type, Content-Length and `Content-Disposition: " +
          `attachment\`. The \`${DOCUMENT_HEADER}\` header carries the Document record as JSON, percent-encoded ` +
          "(encodeURIComponent). 404 when the document is not the tenant's."
      )
  )
  .annotate(OpenApi.Title, "Documents")
  .annotate(OpenApi.Description, "The submitted-documents store: list, store (raw bytes) and stream out")
{}
