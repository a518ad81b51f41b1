import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { UpdateSubledgerCellDto } from "./dtos.js"
import { CommonErrors, ConflictWire, NotFoundWire } from "./errors.js"
import { UuidInput } from "./ids.js"
import { RejectResult, UpdateResult } from "./resources.js"

const RowPath = Schema.Struct({ ledger: Schema.String.check(Schema.isMinLength(1)), rowId: UuidInput })

// Every operation here writes: an Idempotency-Key reused for another request is a 409.
const RowErrors = [...CommonErrors, NotFoundWire, ConflictWire] as const

export class SubledgersGroup extends HttpApiGroup.make("subledgers")
  .add(
    HttpApiEndpoint.post("rejectRow", "/subledgers/:ledger/:rowId/reject", {
      params: RowPath,
      success: RejectResult,
      error: RowErrors
    })
      .annotate(OpenApi.Summary, "Reject a subledger row")
      .annotate(
        OpenApi.Description,
        "Direct mutation for operations tooling. For expenses only NEEDS_ATTENTION rows can be rejected; " +
          "otherwise 400 with `currentStatus`."
      )
  )
  .add(
    HttpApiEndpoint.patch("updateCell", "/subledgers/:ledger/:rowId", {
      params: RowPath,
      payload: UpdateSubledgerCellDto,
      success: UpdateResult,
      error: RowErrors
    })
      .annotate(OpenApi.Summary, "Edit one subledger cell")
      .annotate(
        OpenApi.Description,
        "The field must be editable on the ledger (400 with code INVALID_FIELD otherwise); the value is " +
          "coerced per ledger; a row whose status does not allow edits answers 400 with `currentStatus`."
      )
  )
  .annotate(OpenApi.Title, "Subledgers")
  .annotate(OpenApi.Description, "Direct row mutation, bypassing the workflow")
{}
