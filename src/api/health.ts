import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { CommonErrors } from "./errors.js"

export const Health = Schema.Struct({ status: Schema.Literal("ok") }).annotate({ identifier: "Health" })

export class HealthGroup extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("health", "/health", { success: Health, error: CommonErrors })
      .annotate(OpenApi.Summary, "Liveness")
      .annotate(
        OpenApi.Description,
        "Answers `{status: \"ok\"}` once the process is up. Needs no tenant binding and no upstream."
      )
  )
  .annotate(OpenApi.Title, "Health")
  .annotate(OpenApi.Description, "Process liveness")
{}
