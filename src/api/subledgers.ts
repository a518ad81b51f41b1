import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { UpdateSubledgerCellDto } from "./dtos.js"
import { ConflictWire, NotFoundWire } from "./errors.js"
import { Uuid } from "./ids.js"
import { RejectResult, UpdateResult } from "./resources.js"

const RowPath = Schema.Struct({ ledger: Schema.String.pipe(Schema.minLength(1)), rowId: Uuid })

export class SubledgersGroup extends HttpApiGroup.make("subledgers")
  .add(
    HttpApiEndpoint.post("rejectRow", "/subledgers/:ledger/:rowId/reject")
      .setPath(RowPath)
      .addSuccess(RejectResult)
      .annotate(OpenApi.Summary, "Reject a subledger row")
      .annotate(
        OpenApi.Description,
        "Direct mutation for operations tooling. For expenses only NEEDS_ATTENTION rows can be rejected; " +
          "otherwise 400 with `currentStatus`."
      )
  )
  .add(
    HttpApiEndpoint.patch("updateCell", "/subledgers/:ledger/:rowId")
      .setPath(RowPath)
      .setPayload(UpdateSubledgerCellDto)
      .addSuccess(UpdateResult)
      .annotate(OpenApi.Summary, "Edit one subledger cell")
      .annotate(
        OpenApi.Description,
        "The field must be editable on the ledger (400 with code INVALID_FIELD otherwise); the value is " +
          "coerced per ledger; a row whose status does not allow edits answers 400 with `currentStatus`."
      )
  )
  .addError(NotFoundWire)
  // Every operation here writes: an Idempotency-Key reused for another request is a 409.
  .addError(ConflictWire)
  .annotate(OpenApi.Title, "Subledgers")
  .annotate(OpenApi.Description, "Direct row mutation, bypassing the workflow")
{}
