import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { optional } from "../api/optional.js"
import { closed, UpdateSubledgerCellDto } from "../api/dtos.js"
import { ConflictWire, ForbiddenWire, NotFoundWire } from "../api/errors.js"
import { IdempotencyKeyHeaders } from "../api/idempotency.js"
import { TASK_ID_MAX_LENGTH, Uuid, withUuidFolded } from "../api/ids.js"
import { RejectResult, UpdateResult } from "../api/resources.js"
import { IdParam, JsonObject, NonEmpty, TenantIdParam, TenantTaskPath, WorkspaceErrors } from "./paths.js"

export const IngestDataRequest = Schema.Struct({
  kind: optional(NonEmpty(128).annotate({ description: "Discriminator shared by the batch" })),
  rows: Schema.Array(Schema.Struct({ data: JsonObject, sourceRef: optional(Schema.Unknown) }).pipe(closed("WorkspaceIngestRow"))).check(Schema.isMinLength(1)),
  signal: optional(Schema.Struct({
    taskId: withUuidFolded(NonEmpty(TASK_ID_MAX_LENGTH)),
    name: NonEmpty(128),
    expectedStep: optional(NonEmpty(256).annotate({ description: "The step the signal is for (409 when no longer current)" }))
  }).pipe(closed("WorkspaceIngestSignal")).annotate({
    description: "Signal recorded with each row, delivered after the batch commits"
  }))
}).pipe(closed("WorkspaceIngestDataRequest"))

export const IngestedRow = Schema.Struct({ id: Uuid, signaled: Schema.Boolean }).annotate({
  identifier: "IngestedRow"
})

const RowPath = Schema.Struct({ tenantId: TenantIdParam, ledger: NonEmpty(128), rowId: IdParam("Subledger row UUID") })

export class RecordsGroup extends HttpApiGroup.make("records")
  .add(
    HttpApiEndpoint.post("ingestData", "/tenants/:tenantId/tasks/:taskId/data", {
      params: TenantTaskPath,
      headers: IdempotencyKeyHeaders,
      payload: IngestDataRequest,
      success: Schema.Array(IngestedRow).pipe(HttpApiSchema.status(201)),
      error: [...WorkspaceErrors, NotFoundWire, ConflictWire, ForbiddenWire]
    })
      .annotate(OpenApi.Summary, "Store structured records")
      .annotate(
        OpenApi.Description,
        "Stores the rows in one transaction (all or none), with one signal per row recorded alongside when " +
          "`signal` is given (payload: rowId, kind, taskId). Returns the row ids in order. 404 when the task is " +
          "not the tenant's; 400 when the signal cannot be taken."
      )
  )
  .add(
    HttpApiEndpoint.post("rejectRow", "/tenants/:tenantId/subledgers/:ledger/:rowId/reject", {
      params: RowPath,
      headers: IdempotencyKeyHeaders,
      success: RejectResult,
      error: [...WorkspaceErrors, NotFoundWire, ConflictWire, ForbiddenWire]
    })
      .annotate(OpenApi.Summary, "Reject a subledger row")
      .annotate(
        OpenApi.Description,
        "NEEDS_ATTENTION to REJECTED for expenses (per-ledger rules). 400 with currentStatus from any other status; " +
          "404 when the row is not in the ledger or not the tenant's."
      )
  )
  .add(
    HttpApiEndpoint.patch("updateRow", "/tenants/:tenantId/subledgers/:ledger/:rowId", {
      params: RowPath,
      headers: IdempotencyKeyHeaders,
      payload: UpdateSubledgerCellDto,
      success: UpdateResult,
      error: [...WorkspaceErrors, NotFoundWire, ConflictWire, ForbiddenWire]
    })
      .annotate(OpenApi.Summary, "Edit one subledger cell")
      .annotate(
        OpenApi.Description,
        "Sets one field, coerced per the ledger's registry, and returns the stored value. 400 with code " +
          "INVALID_FIELD for a field not editable on the ledger, with currentStatus when the row's status allows no " +
          "edits, or naming the field when the value cannot be coerced."
      )
  )
  .annotate(OpenApi.Title, "Records and subledgers")
  .annotate(OpenApi.Description, "Structured data ingest and direct subledger row mutations")
{}
