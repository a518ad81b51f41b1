import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { DataIngestDto } from "./dtos.js"
import { ConflictWire, ForbiddenWire, NotFoundWire } from "./errors.js"
import { DataIngestResult } from "./resources.js"
import { TaskPath } from "./tasks.js"

/** Each event's JSON-stringified data may be at most this many UTF-8 bytes (spec §8). */
export const EVENT_DATA_MAX_BYTES = 256 * 1024

export class DataGroup extends HttpApiGroup.make("data")
  .add(
    HttpApiEndpoint.post("ingestData", "/tasks/:taskId/data/ingest")
      .setPath(TaskPath)
      .setPayload(DataIngestDto)
      // Two successes, not one Union: a Union's own status annotation would hide the 201.
      .addSuccess(DataIngestResult, { status: 201 })
      .addSuccess(Schema.Array(DataIngestResult), { status: 201 })
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .addError(ForbiddenWire)
      .annotate(OpenApi.Summary, "Ingest structured records")
      .annotate(
        OpenApi.Description,
        "Single (`data`) or bulk (`events`) records, stored in one transaction per batch. Each event's " +
          "JSON data may be at most 256 KB (UTF-8); one over-cap event rejects the whole batch. After the " +
          "commit, one signal per event fires when signalTaskId and signalName are given."
      )
  )
  .annotate(OpenApi.Title, "Structured data ingest")
  .annotate(OpenApi.Description, "JSON records that signal running workflows")
{}
