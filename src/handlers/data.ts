import * as ParsedPayload from "../http/input/parsedPayload.js"
import * as Effect from "effect/Effect"
import { GatewayApi } from "../api/Api.js"
import { ingestData } from "../services/dataIngest.js"

/** The rules live in ../services/dataIngest.ts, shared with the agent tool server (src/mcp). */
export const DataLive = ParsedPayload.group(GatewayApi, "data", (handlers) =>
  handlers.handle("ingestData", ({ params, payload }) =>
    // A single `data` body answers one result, an `events` batch the list.
    Effect.map(ingestData(params.taskId, payload), (out) => payload.events !== undefined ? out : out[0]!)))
