import * as Option from "effect/Option"
import * as ParsedPayload from "../http/input/parsedPayload.js"
import * as Effect from "effect/Effect"
import { GatewayApi } from "../api/Api.js"
import { rejectRow, updateCell } from "../services/subledgers.js"

export const SubledgersLive = ParsedPayload.group(GatewayApi, "subledgers", (handlers) =>
  Effect.succeed(
    handlers
      .handle("rejectRow", ({ params }) => rejectRow(params.ledger, params.rowId))
      .handle("updateCell", ({ params, payload }) => updateCell(
          params.ledger,
          params.rowId,
          payload.field,
          payload.value,
          "expected" in payload && payload.expected !== undefined ? Option.some(payload.expected) : Option.none()
        ))
  ))
