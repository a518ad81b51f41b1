import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { GatewayApi } from "../api/Api.js"
import { rejectRow, updateCell } from "../services/subledgers.js"

export const SubledgersLive = HttpApiBuilder.group(GatewayApi, "subledgers", (handlers) =>
  Effect.succeed(
    handlers
      .handle("rejectRow", ({ path }) => rejectRow(path.ledger, path.rowId))
      .handle("updateCell", ({ path, payload }) => updateCell(path.ledger, path.rowId, payload.field, payload.value))
  ))
