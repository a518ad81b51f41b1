import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { GatewayApi } from "../api/Api.js"
import { EVENT_DATA_MAX_BYTES } from "../api/data.js"
import type { DataIngestDto } from "../api/dtos.js"
import { BadRequest } from "../api/errors.js"
import { signalFrom } from "../services/signals.js"
import { Tenant } from "../services/Tenant.js"
import { WorkspaceClient } from "../services/WorkspaceClient.js"

type Row = { readonly data: Record<string, unknown>; readonly sourceRef?: unknown }

/** The batch's rows: the single `data` body is a batch of one (top-level sourceRef applies to it only). */
const rowsOf = (dto: DataIngestDto): ReadonlyArray<Row> =>
  dto.events ?? [{ data: dto.data!, ...(dto.sourceRef !== undefined ? { sourceRef: dto.sourceRef } : {}) }]

/** One over-cap event rejects the whole batch: measured in UTF-8 bytes of its JSON data. */
const checkSizes = (rows: ReadonlyArray<Row>, bulk: boolean): Effect.Effect<void, BadRequest> => {
  for (let i = 0; i < rows.length; i++) {
    const bytes = Buffer.byteLength(JSON.stringify(rows[i]!.data), "utf8")
    if (bytes > EVENT_DATA_MAX_BYTES) {
      const where = bulk ? `events[${i}].data` : "data"
      return Effect.fail(
        new BadRequest({ message: `${where}: ${bytes} bytes of JSON exceeds the ${EVENT_DATA_MAX_BYTES}-byte cap; batch rejected` })
      )
    }
  }
  return Effect.void
}

export const DataLive = HttpApiBuilder.group(GatewayApi, "data", (handlers) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const tenants = yield* Tenant

    return handlers.handle("ingestData", ({ path, payload }) =>
      Effect.gen(function*() {
        const bulk = payload.events !== undefined
        const rows = rowsOf(payload)
        yield* checkSizes(rows, bulk)
        const { tenant } = yield* tenants.requireTask(path.taskId)
        const results = yield* workspace.ingestData(
          tenant.id,
          { taskId: path.taskId, ...(payload.kind !== undefined ? { kind: payload.kind } : {}), rows },
          signalFrom(payload, {})
        )
        const out = results.map((r) => ({ id: r.id, status: "accepted" as const, signaled: r.signaled }))
        return bulk ? out : out[0]!
      }))
  }))
