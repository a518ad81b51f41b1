import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { DataIngestDto } from "./dtos.js"
import { CommonErrors, ConflictWire, NotFoundWire } from "./errors.js"
import { DataIngestResult } from "./resources.js"
import { TaskPath } from "./tasks.js"

/** Each event's JSON-stringified data may be at most this many UTF-8 bytes (spec §8). */
export const EVENT_DATA_MAX_BYTES = 256 * 1024

export class DataGroup extends HttpApiGroup.make("data")
  .add(
    HttpApiEndpoint.post("ingestData", "/tasks/:taskId/data/ingest", {
      params: TaskPath,
      payload: DataIngestDto,
      // Two successes, not one Union, each with its status.
      success: [
        DataIngestResult.pipe(HttpApiSchema.status(201)),
        Schema.Array(DataIngestResult).pipe(HttpApiSchema.status(201))
      ],
      error: [...CommonErrors, NotFoundWire, ConflictWire]
    })
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
