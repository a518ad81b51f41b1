/**
 * `npm run workspace`: the embedded workspace served on its own as WorkspaceApi, so a gateway
 * started with SVC_WORKSPACE_URL reaches it over HTTP like any workspace service.
 * Settings: SVC_WORKSPACE_PORT (default 4000), HOST, SVC_DATABASE_URL, SVC_SEED_FILE, SVC_PUBLIC_URL.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { createServer } from "node:http"
import { failStart } from "../http/failStart.js"
import { embeddedWorkspaceApp } from "./api/mount.js"
import { WORKSPACE_OPENAPI_PATH } from "./api/WorkspaceApi.js"
import { databasePathOf, embeddedSettings, makeEmbeddedLayer } from "./embedded/layer.js"

const main = Effect.gen(function*() {
  const port = yield* Config.port("SVC_WORKSPACE_PORT").pipe(Config.withDefault(4000))
  const host = yield* Config.string("HOST").pipe(Config.withDefault("127.0.0.1"))
  const settings = yield* embeddedSettings
  const explicitPublicUrl = yield* Config.option(Config.string("SVC_PUBLIC_URL"))
  const { url } = settings
  const path = databasePathOf(url)
  const serve = Layer.unwrapScoped(Effect.map(embeddedWorkspaceApp, (app) => HttpServer.serve(app)))
  const base = `http://${host}:${port}`
  // GL connect links point at this process unless SVC_PUBLIC_URL says otherwise.
  const workspace = makeEmbeddedLayer({ ...settings, publicUrl: Option.getOrElse(explicitPublicUrl, () => base) })
  return yield* Layer.launch(
    serve.pipe(
      Layer.provide(workspace),
      Layer.provide(NodeHttpServer.layer(createServer, { port, host })),
      Layer.tap(() =>
        Effect.logInfo(
          `workspace service listening on ${base}\n  database: ${path.ok ? path.value : url}\n  OpenAPI:  ${base}${WORKSPACE_OPENAPI_PATH}`
        )
      )
    )
  )
})

NodeRuntime.runMain(main.pipe(Effect.catchAll(failStart)))
