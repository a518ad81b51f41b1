/**
 * Serves WorkspaceApi over any WorkspaceClient implementation: handlers are one-line
 * delegations to the port. The registry and the GL webhook go to `WorkspaceExtras`, and answer
 * 501 in the spec's error shape when none is given. The OpenAPI document is at
 * GET /workspace/openapi.json, an API reference page at /workspace/docs.
 *
 * Usage: `WorkspaceApiLive(service, extras).pipe(Layer.provide(NodeHttpServer.layer(...)))`.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import type * as HttpRouter from "@effect/platform/HttpRouter"
import type * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import { BadRequest } from "../../api/errors.js"
import { arrivalOf } from "../../http/arrival.js"
import { CurrentRequest, forwardedRequestContextOf } from "../../observability/requestContext.js"
import { requireBearer } from "./AdminConfig.js"
import { attachment } from "../../http/contentDisposition.js"
import { limitDeclaredBody } from "../../http/bodyLimit.js"
import { refuseAllCrossSiteWrites } from "../../http/crossSite.js"
import { DEFAULT_MAX_JSON_DEPTH } from "../../api/jsonValue.js"
import { shapeErrors } from "../../http/errorResponse.js"
import { checkedJsonBodies } from "../../http/jsonInput.js"
import { lazyRoutes } from "../../http/lazyRoutes.js"
import { RouterConfigLive, withRouterConfig } from "../../http/ServerLimits.js"
import { withIdempotencyKey, type WorkspaceClientService } from "../../upstream/WorkspaceClient.js"
import { DOCUMENT_HEADER } from "../../upstream/documents.js"
import { forwardedActor } from "./forwardedActor.js"
import { isNotImplemented, NotImplemented } from "../../upstream/errors.js"
import type { WorkspaceExtras } from "../../upstream/extras.js"
import { WORKSPACE_OPENAPI_PATH, WORKSPACE_PREFIX, WorkspaceApi } from "../../upstream/WorkspaceApi.js"
import { errorResponse } from "../../http/errorBody.js"

export interface WorkspaceServerOptions {
  /** Request bodies above this many bytes answer 413 (default 64 MiB). */
  readonly maxBodyBytes?: number | undefined
  /** A tracing span per request (default off: it costs a large share of throughput). */
  readonly tracing?: boolean | undefined
  /**
   * When set, every request (docs, OpenAPI and unknown paths included) needs
   * `Authorization: Bearer <token>`, else 401 (./AdminConfig.ts).
   */
  readonly adminToken?: Redacted.Redacted<string> | undefined
}

export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024

/** A write with the request's Idempotency-Key (400 for a malformed one): the port stores its result under it. */
const keyed = <A, E>(headers: { readonly "idempotency-key"?: string | undefined }, write: Effect.Effect<A, E>) =>
  withIdempotencyKey(headers["idempotency-key"])(write)

const groups = (service: WorkspaceClientService, extras: WorkspaceExtras | undefined) => {
  const Tenants = HttpApiBuilder.group(WorkspaceApi, "tenants", (handlers) =>
    handlers
      .handle("resolveTenant", ({ path }) => service.resolveTenant(path.slug))
      .handle("listEntities", ({ path }) => service.listEntities(path.tenantId))
      .handle("getEntity", ({ path }) => service.getEntity(path.tenantId, path.entityId))
      .handle("listTasks", ({ path, urlParams }) =>
        service.listTasks(
          path.tenantId,
          path.entityId,
          Object.keys(urlParams).length === 0 ? undefined : {
            status: urlParams.status,
            currentSteps: urlParams.steps,
            afterId: urlParams.after,
            limit: urlParams.limit
          }
        ))
      .handle("createTask", ({ headers, path, payload }) =>
        keyed(headers, service.createTask(path.tenantId, path.entityId, payload)))
      .handle("listWorkflows", ({ path }) => service.listWorkflows(path.tenantId))
      .handle("getRunbook", ({ path }) => service.getRunbook(path.tenantId, path.workflowId)))

  const Tasks = HttpApiBuilder.group(WorkspaceApi, "tasks", (handlers) =>
    handlers
      .handle("getTask", ({ path }) => service.getTask(path.taskId))
      .handle("getNextStep", ({ path }) => service.getNextStep(path.tenantId, path.taskId))
      .handle("getNextSteps", ({ path, payload }) => service.getNextSteps(path.tenantId, payload.taskIds))
      .handle("getSnapshots", ({ path }) => service.getSnapshots(path.tenantId, path.taskId))
      .handle("signal", ({ headers, path, payload }) => keyed(headers, service.signal(path.tenantId, payload)))
      .handle("appendEvent", ({ headers, path, payload }) =>
        keyed(headers, service.appendEvent(path.tenantId, path.taskId, payload)))
      .handle("listEvents", ({ path, urlParams }) => service.listEvents(path.tenantId, path.taskId, urlParams)))

  const Documents = HttpApiBuilder.group(WorkspaceApi, "documents", (handlers) =>
    handlers
      .handle("listDocuments", ({ path, urlParams }) =>
        service.listDocuments(path.tenantId, path.taskId, { source: urlParams.source, limit: urlParams.limit }))
      .handle("putDocument", ({ headers, path, payload, urlParams: q }) =>
        Effect.gen(function*() {
          if ((q.signalTaskId === undefined) !== (q.signalName === undefined)) {
            return yield* new BadRequest({ message: "signalTaskId and signalName must be given together" })
          }
          const signal = q.signalTaskId !== undefined && q.signalName !== undefined
            ? Option.some({
              taskId: q.signalTaskId,
              name: q.signalName,
              payload: q.signalPayload ?? {},
              ...(q.signalExpectedStep !== undefined ? { expectedStep: q.signalExpectedStep } : {})
            })
            : Option.none()
          return yield* service.putDocument(path.tenantId, {
            taskId: path.taskId,
            source: q.source,
            filename: q.filename,
            contentType: q.contentType,
            period: q.period,
            schemaSlug: q.schemaSlug,
            bytes: payload
          }, signal).pipe((write) => keyed(headers, write))
        }))
      .handle("openDocument", ({ path }) =>
        Effect.map(service.openDocument(path.tenantId, path.documentId), ({ body, document }) =>
          HttpServerResponse.stream(body, {
            contentType: document.contentType,
            contentLength: document.sizeBytes,
            headers: {
              "content-disposition": attachment(document.filename),
              [DOCUMENT_HEADER]: encodeURIComponent(JSON.stringify(document))
            }
          }))))

  const Records = HttpApiBuilder.group(WorkspaceApi, "records", (handlers) =>
    handlers
      .handle("ingestData", ({ headers, path, payload }) =>
        keyed(
          headers,
          service.ingestData(
            path.tenantId,
            { taskId: path.taskId, ...(payload.kind !== undefined ? { kind: payload.kind } : {}), rows: payload.rows },
            Option.fromNullishOr(payload.signal)
          )
        ))
      .handle("rejectRow", ({ headers, path }) => keyed(headers, service.rejectRow(path.tenantId, path.ledger, path.rowId)))
      .handle("updateRow", ({ headers, path, payload }) =>
        keyed(headers, service.updateRow(path.tenantId, path.ledger, path.rowId, payload.field, payload.value))))

  const Gl = HttpApiBuilder.group(WorkspaceApi, "gl", (handlers) =>
    handlers
      .handle("getGlConnection", ({ path }) =>
        Effect.map(service.getGlConnection(path.tenantId), (c) => ({ connection: Option.getOrNull(c) })))
      .handle("createGlSession", ({ headers, path, payload }) =>
        keyed(headers, service.createGlSession(path.tenantId, payload.serviceId)))
      .handle("deleteGlConnection", ({ headers, path }) => keyed(headers, service.deleteGlConnection(path.tenantId))))

  const withExtras = <A, E>(f: (extras: WorkspaceExtras) => Effect.Effect<A, E>): Effect.Effect<A, E | NotImplemented> =>
    extras === undefined
      ? Effect.fail(
        new NotImplemented({ message: "This workspace service does not serve the agent registry or the GL webhook" })
      )
      : f(extras)

  const Registry = HttpApiBuilder.group(WorkspaceApi, "registry", (handlers) =>
    handlers
      .handle("createAgent", ({ payload }) => withExtras((x) => x.createAgent(payload)))
      .handle("listAgents", ({ urlParams }) => withExtras((x) => x.listAgents(urlParams.tenantId)))
      .handle("getAgent", ({ path }) => withExtras((x) => x.getAgent(path.id)))
      .handle("deleteAgent", ({ path }) => withExtras((x) => x.deleteAgent(path.id)))
      .handle("createAgentVersion", ({ path, payload }) => withExtras((x) => x.createAgentVersion(path.id, payload)))
      .handle("findAgentByKeyHash", ({ path, payload }) => service.findAgentByKeyHash(path.tenantId, payload.keyHash))
      .handle("glWebhookSuccess", ({ payload }) =>
        withExtras((x) => x.completeGlSession(payload.consumerId, payload.service))))

  return [Tenants, Tasks, Documents, Records, Gl, Registry] as const
}

const notImplemented = (e: NotImplemented) =>
  errorResponse(e.statusCode, e.error, e.message)

/**
 * A declared Content-Length over the limit answers 413 before a byte is read; chunked bodies
 * are capped while read. Every failure then leaves in the spec's error shape (501 included).
 * The handlers run on behalf of the actor the gateway names in x-svc-actor (./forwardedActor.ts).
 * (The gateway's own middleware does the same with its TenantConfig limit.)
 */
export const WorkspaceMiddleware = (maxBodyBytes: number = DEFAULT_MAX_BODY_BYTES) => {
  const limit = limitDeclaredBody(maxBodyBytes)
  const checked = checkedJsonBodies(DEFAULT_MAX_JSON_DEPTH, isRawDocument)
  return HttpApiBuilder.middleware((app) =>
    shapeErrors(
      // Before the body is read: a web page on any site could otherwise post here (a field-less
      // form post has no body to refuse); servers, the CLI and same-origin pages send no such marks.
      noBrowserWrites(limit(
        checked(forwardedActor(HttpIncomingMessage.withMaxBodySize(withForwardedRequest(app), Option.some(maxBodyBytes)).pipe(
          Effect.catchCause((cause) => {
            const failure = Cause.failureOption(cause)
            return Option.isSome(failure) && isNotImplemented(failure.value)
              ? Effect.succeed(notImplemented(failure.value))
              : Effect.failCause(cause)
          })
        )))
      ))
    )
  )
}

const noBrowserWrites = refuseAllCrossSiteWrites("the workspace API takes no writes from web pages on other sites")

/**
 * The caller's request id and arrival time (src/observability/requestContext.ts) in the
 * handlers' context: the store binds a decision to the step current when the gateway received it.
 */
const withForwardedRequest = <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    let stamped: number | undefined
    try {
      stamped = arrivalOf(NodeHttpServerRequest.toIncomingMessage(request))
    } catch {
      stamped = undefined
    }
    return Effect.provideService(app, CurrentRequest, forwardedRequestContextOf(request.headers, stamped))
  })

/** The one body that is raw bytes by contract: a document's, sent as octet-stream. */
const isRawDocument = (request: HttpServerRequest.HttpServerRequest) =>
  request.method === "POST" &&
  /^application\/octet-stream\s*(;|$)/i.test(request.headers["content-type"] ?? "") &&
  /\/documents\/?(?:\?|$)/.test(request.url)

/** WorkspaceApi with its handlers: the `HttpApi.Api` service that HttpApiBuilder serves. */
export const WorkspaceHandlersLive = (service: WorkspaceClientService, extras?: WorkspaceExtras) =>
  HttpApiBuilder.api(WorkspaceApi).pipe(Layer.provide(groups(service, extras)))

/**
 * GET /workspace/openapi.json and the API reference page at /workspace/docs (no network needed),
 * built on first use like the gateway's (src/gateway/Gateway.ts): the page inlines a 3 MB script.
 */
export const WorkspaceDocsLive = Layer.mergeAll(
  lazyRoutes([WORKSPACE_OPENAPI_PATH], async () => HttpApiBuilder.middlewareOpenApi({ path: WORKSPACE_OPENAPI_PATH })),
  lazyRoutes([`${WORKSPACE_PREFIX}/docs`], async () =>
    (await import("@effect/platform/HttpApiScalar")).layer({
      path: `${WORKSPACE_PREFIX}/docs`,
      scalar: { withDefaultFonts: false }
    }))
)

/**
 * WorkspaceApi as a self-contained HttpApp (its own router, middleware and docs, built with a
 * separate memo map so none of it is shared with another HttpApi in the same process): for
 * mounting under /workspace in a server that already serves another HttpApi, e.g.
 * `HttpApiBuilder.Router.use((router) => Effect.flatMap(makeWorkspaceHttpApp(ws, ws),
 * (app) => router.mountApp("/workspace", app, { includePrefix: true })))`.
 */
export const makeWorkspaceHttpApp = (
  service: WorkspaceClientService,
  extras?: WorkspaceExtras,
  options: WorkspaceServerOptions = {}
): Effect.Effect<HttpApp.Default<never, HttpRouter.HttpRouter.DefaultServices>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const layer = Layer.mergeAll(
      WorkspaceDocsLive,
      WorkspaceMiddleware(options.maxBodyBytes),
      HttpApiBuilder.Router.Live,
      HttpApiBuilder.Middleware.layer
    ).pipe(Layer.provideMerge(WorkspaceHandlersLive(service, extras)))
    const context = yield* Layer.buildWithMemoMap(layer, yield* Layer.makeMemoMap, yield* Effect.scope)
    const served = yield* Effect.provide(HttpApiBuilder.httpApp, context).pipe(withRouterConfig)
    // Mounted beside another HttpApi, the request would carry that one: 405s need this API's routes.
    const app = requireBearer(Option.fromNullishOr(options.adminToken))(
      Effect.provideService(served, HttpApi.Api, Context.get(context, HttpApi.Api))
    )
    return options.tracing === true ? app : Effect.locally(app, HttpMiddleware.currentTracerDisabledWhen, () => true)
  })

/** WorkspaceApi served over `service` (and `extras` for the registry and GL webhook). Needs an HttpServer. */
export const WorkspaceApiLive = (
  service: WorkspaceClientService,
  extras?: WorkspaceExtras,
  options: WorkspaceServerOptions = {}
): Layer.Layer<never, never, HttpServer.HttpServer | HttpRouter.HttpRouter.DefaultServices> => {
  const served = HttpApiBuilder.serve(requireBearer(Option.fromNullishOr(options.adminToken))).pipe(
    Layer.provide(WorkspaceDocsLive),
    Layer.provide(WorkspaceMiddleware(options.maxBodyBytes)),
    Layer.provide(WorkspaceHandlersLive(service, extras)),
    Layer.provide(RouterConfigLive)
  )
  return options.tracing === true ? served : HttpMiddleware.withTracerDisabledWhen(served, () => true)
}
