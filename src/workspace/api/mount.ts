/**
 * In embedded mode the gateway process also serves the workspace under /workspace: the
 * WorkspaceApi (registry, GL webhook, ...) and the local GL adapter's connect page, so a
 * sessionUrl handed out by /v1/gl/connect/session opens on this same process.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import { EmbeddedWorkspace } from "../embedded/layer.js"
import { glConnectPage } from "../glConnectPage.js"
import { makeWorkspaceHttpApp } from "./server.js"
import { WORKSPACE_PREFIX } from "./WorkspaceApi.js"

/** The connect page of one session: `/workspace/gl/connect/<consumerId>`. */
const CONNECT_PAGE = /^\/workspace\/gl\/connect\/([0-9a-f-]{36})\/?(?:\?.*)?$/i

/** The embedded workspace's whole HTTP surface: WorkspaceApi plus the GL connect page. */
export const embeddedWorkspaceApp = Effect.gen(function*() {
  const workspace = yield* EmbeddedWorkspace
  const api = yield* makeWorkspaceHttpApp(workspace, workspace)
  // The page is HTML outside the WorkspaceApi contract; it sits in front of the API.
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const page = request.method === "GET" ? CONNECT_PAGE.exec(request.url) : null
    return page === null ? api : Effect.succeed(HttpServerResponse.html(glConnectPage(page[1]!, undefined)))
  })
})

/** Mounts it under /workspace on the gateway's own router. */
export const WorkspaceRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.flatMap(embeddedWorkspaceApp, (app) => router.mountApp(WORKSPACE_PREFIX, app, { includePrefix: true }))
)
