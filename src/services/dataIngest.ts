/**
 * Structured data ingest of spec §4 ("Structured data ingest"), shared by the HTTP handler
 * (src/handlers/data.ts) and the agent tool server (src/mcp/tools.ts).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { EVENT_DATA_MAX_BYTES } from "../api/data.js"
import type { DataIngestDto } from "../api/dtos.js"
import { jsonText } from "../api/jsonText.js"
import { BadRequest } from "../api/errors.js"
import { requireSignalName, signalFrom } from "./signals.js"
import { ringAfterSignal } from "./TaskEventBell.js"
import { Tenant } from "./Tenant.js"
import { WorkspaceClient } from "../upstream/WorkspaceClient.js"

type Row = { readonly data: Record<string, unknown>; readonly sourceRef?: unknown }

/** The batch's rows: the single `data` body is a batch of one (top-level sourceRef applies to it only). */
const rowsOf = (dto: DataIngestDto): ReadonlyArray<Row> =>
  dto.events ?? [{ data: dto.data!, ...(dto.sourceRef !== undefined ? { sourceRef: dto.sourceRef } : {}) }]

/** One over-cap event rejects the whole batch: measured in UTF-8 bytes of its JSON data. */
const checkSizes = (rows: ReadonlyArray<Row>, bulk: boolean): Effect.Effect<void, BadRequest> => {
  for (let i = 0; i < rows.length; i++) {
    const bytes = Buffer.byteLength(jsonText(rows[i]!.data), "utf8")
    if (bytes > EVENT_DATA_MAX_BYTES) {
      const where = bulk ? `events[${i}].data` : "data"
      return Effect.fail(
        new BadRequest({ message: `${where}: ${bytes} bytes of JSON exceeds the ${EVENT_DATA_MAX_BYTES}-byte cap; batch rejected` })
      )
    }
  }
  return Effect.void
}

/**
 * Stores the batch (one transaction) and its signals; one result per row, in order. With
 * `expectedStep` (internal: the agent tool server's checked step) the signals are bound to it.
 */
export const ingestData = (taskId: string, dto: DataIngestDto, options: { readonly expectedStep?: string | undefined } = {}) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const rows = rowsOf(dto)
    yield* checkSizes(rows, dto.events !== undefined)
    yield* requireSignalName(dto.signalName)
    const { tenant } = yield* (yield* Tenant).requireTask(taskId)
    const results = yield* workspace.ingestData(
      tenant.id,
      { taskId, ...(dto.kind !== undefined ? { kind: dto.kind } : {}), rows },
      signalFrom(dto, {}, options.expectedStep)
    )
    yield* ringAfterSignal(Option.getOrUndefined(signalFrom(dto, {}))?.taskId)
    return results.map((r) => ({ id: r.id, status: "accepted" as const, signaled: r.signaled }))
  })
