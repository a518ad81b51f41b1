/**
 * Serves WorkspaceApi over any WorkspaceClient implementation: handlers are one-line
 * delegations to the port. The registry and the GL webhook go to `WorkspaceExtras`, and answer
 * 501 in the spec's error shape when none is given. The OpenAPI document is at
 * GET /workspace/openapi.json, an API reference page at /workspace/docs.
 *
 * Usage: `WorkspaceApiLive(service, extras).pipe(Layer.provide(NodeHttpServer.layer(...)))`.
 */
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as ByteSize from "effect/ByteSize"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as References from "effect/References"
import type * as Scope from "effect/Scope"
import type * as Types from "effect/Types"
import type * as http from "node:http"
import { BadRequest, UnsupportedMediaType } from "../../api/errors.js"
import { arrivalOf } from "../../http/server/arrival.js"
import { CurrentRequest } from "../../observability/requestContext.js"
import { forwardedRequestContextOf } from "../../services/arrival.js"
import { requireBearer } from "./AdminConfig.js"
import { attachment } from "../../http/output/contentDisposition.js"
import { limitDeclaredBody } from "../../http/input/bodyLimit.js"
import { refuseAllCrossSiteWrites } from "../../http/input/crossSite.js"
import { DEFAULT_MAX_JSON_DEPTH } from "../../api/jsonValue.js"
import { shapeErrors } from "../../http/errors/errorResponse.js"
import { checkedJsonBodies, DEFAULT_MAX_JSON_ITEMS, unsupportedMediaType } from "../../http/input/jsonInput.js"
import { lazyRoutes, withoutRequest } from "../../http/server/lazyRoutes.js"
import { withPageSecurity } from "../../http/output/pageSecurity.js"
import { refuseUnknownQueryParams } from "../../http/input/queryParams.js"
import { withRouterConfig } from "../../http/server/ServerLimits.js"
import { routableBy, withRoutes } from "../../http/errors/unrouted.js"
import { type TaskQuery, withIdempotencyKey, type WorkspaceClientService } from "../../upstream/WorkspaceClient.js"
import { boardJson, taskBoard } from "../../upstream/taskBoard.js"
import type { TaskQueryParams } from "../../upstream/tenants.js"
import { DOCUMENT_HEADER } from "../../upstream/documents.js"
import { forwardedActor } from "./forwardedActor.js"
import { isNotImplemented, NotImplemented } from "../../upstream/errors.js"
import type { WebhookSubscriptions, WorkspaceExtras } from "../../upstream/extras.js"
import { WORKSPACE_OPENAPI_PATH, WORKSPACE_PREFIX, WorkspaceApi } from "../../upstream/WorkspaceApi.js"
import { errorResponse } from "../../http/errors/errorBody.js"

/**
 * Items the workspace service takes past SVC_MAX_JSON_ITEMS: what the gateway forwards is a
 * client's body within that limit, wrapped (an ingest's rows with its kind and signal: a few items).
 */
export const ENVELOPE_ITEMS = 64

export interface WorkspaceServerOptions {
  /** Request bodies above this many bytes answer 413 (default 64 MiB). */
  readonly maxBodyBytes?: number | undefined
  /**
   * JSON bodies holding more items answer 413 before their parse (SVC_MAX_JSON_ITEMS, default
   * 1,000,000), ENVELOPE_ITEMS more taken: what the gateway forwards wraps a client's body.
   */
  readonly maxJsonItems?: number | undefined
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

/** A TaskQuery from the list's query parameters; none given: every task. */
const taskQueryOf = (query: typeof TaskQueryParams.Type): TaskQuery | undefined =>
  Object.keys(query).length === 0
    ? undefined
    : { status: query.status, currentSteps: query.steps, afterId: query.after, limit: query.limit }

const groups = (service: WorkspaceClientService, extras: WorkspaceExtras | undefined) => {
  const board = taskBoard(service)
  const Tenants = HttpApiBuilder.group(WorkspaceApi, "tenants", (handlers) =>
    handlers
      .handle("resolveTenant", ({ params }) => service.resolveTenant(params.slug))
      .handle("listEntities", ({ params }) => service.listEntities(params.tenantId))
      .handle("getEntity", ({ params }) => service.getEntity(params.tenantId, params.entityId))
      .handle("listTasks", ({ params, query }) => service.listTasks(params.tenantId, params.entityId, taskQueryOf(query)))
      .handle("listTaskBoard", ({ params, query }) =>
        Effect.map(board(params.tenantId, params.entityId, taskQueryOf(query)), (tasks) =>
          // The HttpApi's own JSON answer (status, content type), without its Schema encode (boardJson).
          HttpServerResponse.text(boardJson(tasks), { status: 200, contentType: "application/json" })))
      .handle("createTask", ({ headers, params, payload }) =>
        keyed(headers, service.createTask(params.tenantId, params.entityId, payload)))
      .handle("listWorkflows", ({ params }) => service.listWorkflows(params.tenantId))
      .handle("getRunbook", ({ params }) => service.getRunbook(params.tenantId, params.workflowId)))

  const Tasks = HttpApiBuilder.group(WorkspaceApi, "tasks", (handlers) =>
    handlers
      .handle("getTask", ({ params }) => service.getTask(params.taskId))
      .handle("getNextStep", ({ params }) => service.getNextStep(params.tenantId, params.taskId))
      .handle("getNextSteps", ({ params, payload }) => service.getNextSteps(params.tenantId, payload.taskIds))
      .handle("getSnapshots", ({ params }) => service.getSnapshots(params.tenantId, params.taskId))
      .handle("signal", ({ headers, params, payload }) => keyed(headers, service.signal(params.tenantId, payload)))
      .handle("appendEvent", ({ headers, params, payload }) =>
        keyed(headers, service.appendEvent(params.tenantId, params.taskId, payload)))
      .handle("recordEvent", ({ headers, params, payload }) =>
        keyed(headers, service.recordEvent(params.tenantId, params.taskId, payload)))
      .handle("listEvents", ({ params, query }) => service.listEvents(params.tenantId, params.taskId, query)))

  const Inbox = HttpApiBuilder.group(WorkspaceApi, "inbox", (handlers) =>
    handlers
      .handle("inbox", ({ params, payload }) => service.inbox(params.tenantId, payload))
      .handle("claimStep", ({ headers, params, payload }) =>
        keyed(headers, service.claimStep(params.tenantId, params.taskId, payload.override)))
      .handle("releaseClaim", ({ headers, params }) => keyed(headers, service.releaseClaim(params.tenantId, params.taskId))))

  const Documents = HttpApiBuilder.group(WorkspaceApi, "documents", (handlers) =>
    handlers
      .handle("listDocuments", ({ params, query }) =>
        service.listDocuments(params.tenantId, params.taskId, { source: query.source, limit: query.limit }))
      .handle("putDocument", ({ headers, params, payload, query: q }) =>
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
          return yield* service.putDocument(params.tenantId, {
            taskId: params.taskId,
            source: q.source,
            filename: q.filename,
            contentType: q.contentType,
            period: q.period,
            schemaSlug: q.schemaSlug,
            bytes: payload
          }, signal).pipe((write) => keyed(headers, write))
        }))
      .handle("openDocument", ({ params }) =>
        Effect.map(service.openDocument(params.tenantId, params.documentId), ({ body, document }) =>
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
      .handle("ingestData", ({ headers, params, payload }) =>
        keyed(
          headers,
          service.ingestData(
            params.tenantId,
            { taskId: params.taskId, ...(payload.kind !== undefined ? { kind: payload.kind } : {}), rows: payload.rows },
            Option.fromNullishOr(payload.signal)
          )
        ))
      .handle("rejectRow", ({ headers, params }) => keyed(headers, service.rejectRow(params.tenantId, params.ledger, params.rowId)))
      .handle("updateRow", ({ headers, params, payload }) =>
        keyed(
          headers,
          service.updateRow(
            params.tenantId,
            params.ledger,
            params.rowId,
            payload.field,
            payload.value,
            payload.expected !== undefined ? Option.some(payload.expected) : Option.none()
          )
        )))

  const Gl = HttpApiBuilder.group(WorkspaceApi, "gl", (handlers) =>
    handlers
      .handle("getGlConnection", ({ params }) =>
        Effect.map(service.getGlConnection(params.tenantId), (c) => ({ connection: Option.getOrNull(c) })))
      .handle("createGlSession", ({ headers, params, payload }) =>
        keyed(headers, service.createGlSession(params.tenantId, payload.serviceId)))
      .handle("deleteGlConnection", ({ headers, params }) => keyed(headers, service.deleteGlConnection(params.tenantId))))

  const withExtras = <A, E>(f: (extras: WorkspaceExtras) => Effect.Effect<A, E>): Effect.Effect<A, E | NotImplemented> =>
    extras === undefined
      ? Effect.fail(
        new NotImplemented({ message: "This workspace service does not serve the agent registry or the GL webhook" })
      )
      : f(extras)

  const Registry = HttpApiBuilder.group(WorkspaceApi, "registry", (handlers) =>
    handlers
      .handle("createAgent", ({ payload }) => withExtras((x) => x.createAgent(payload)))
      .handle("listAgents", ({ query }) => withExtras((x) => x.listAgents(query.tenantId)))
      .handle("getAgent", ({ params }) => withExtras((x) => x.getAgent(params.id)))
      .handle("deleteAgent", ({ params }) => withExtras((x) => x.deleteAgent(params.id)))
      .handle("createAgentVersion", ({ params, payload }) => withExtras((x) => x.createAgentVersion(params.id, payload)))
      .handle("findAgentByKeyHash", ({ params, payload }) => service.findAgentByKeyHash(params.tenantId, payload.keyHash))
      .handle("glWebhookSuccess", ({ payload }) =>
        withExtras((x) => x.completeGlSession(payload.consumerId, payload.service)))
      .handle("createDecisionLinks", ({ payload }) => withExtras((x) => x.createDecisionLinksFor(payload)))
      .handle("revokeDecisionLinks", ({ payload }) => withExtras((x) => x.revokeDecisionLinksFor(payload))))

  const withWebhooks = <A, E>(f: (webhooks: WebhookSubscriptions) => Effect.Effect<A, E>) =>
    withExtras((x): Effect.Effect<A, E | NotImplemented> =>
      x.webhooks === undefined
        ? Effect.fail(new NotImplemented({ message: "This workspace service does not serve webhook subscriptions" }))
        : f(x.webhooks)
    )

  const Webhooks = HttpApiBuilder.group(WorkspaceApi, "webhooks", (handlers) =>
    handlers
      .handle("createWebhook", ({ payload }) => withWebhooks((w) => w.create(payload)))
      .handle("listWebhooks", ({ query }) => withWebhooks((w) => w.list(query.tenant)))
      .handle("getWebhook", ({ params, query }) => withWebhooks((w) => w.get(query.tenant, params.id)))
      .handle("deleteWebhook", ({ params, query }) => withWebhooks((w) => w.remove(query.tenant, params.id)))
      .handle("rotateWebhookSecret", ({ params, query }) => withWebhooks((w) => w.rotateSecret(query.tenant, params.id)))
      .handle("enableWebhook", ({ params, query }) => withWebhooks((w) => w.setEnabled(query.tenant, params.id, true)))
      .handle("disableWebhook", ({ params, query }) => withWebhooks((w) => w.setEnabled(query.tenant, params.id, false)))
      .handle("listWebhookDeliveries", ({ params, query }) =>
        withWebhooks((w) => w.deliveries(query.tenant, params.id, query.limit ?? 50)))
      .handle("resendWebhookDelivery", ({ params, query }) => withWebhooks((w) => w.resend(query.tenant, params.deliveryId))))

  return Layer.mergeAll(Tenants, Tasks, Inbox, Documents, Records, Gl, Registry, Webhooks)
}

const notImplemented = (e: NotImplemented) =>
  errorResponse(e.statusCode, e.error, e.message)

/** Every route of the app (the API's and its docs'): what 404 and 405 are judged by. */
const WORKSPACE_ROUTES = withRoutes(WorkspaceApi, [
  { method: "GET", path: WORKSPACE_OPENAPI_PATH },
  { method: "GET", path: `${WORKSPACE_PREFIX}/docs` }
])
const workspaceRouted = routableBy(WORKSPACE_ROUTES)

/** What the router hands a global middleware (Effect 4's router types the errors as unhandled). */
type RouterApp = Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled>

/**
 * A declared Content-Length over the limit answers 413 before a byte is read; chunked bodies
 * are capped while read. Every failure then leaves in the spec's error shape (501 included).
 * The handlers run on behalf of the actor the gateway names in x-svc-actor (./forwardedActor.ts).
 * (The gateway's own middleware does the same with its TenantConfig limit.) A global router
 * middleware: unrouted requests (404, 405) pass through it too.
 */
export const WorkspaceMiddleware = (maxBodyBytes: number = DEFAULT_MAX_BODY_BYTES, maxJsonItems: number = DEFAULT_MAX_JSON_ITEMS) => {
  const limit = limitDeclaredBody(maxBodyBytes)
  // A refused JSON body where no route takes the method (or has the path): the router's 405 or
  // 404, as without a body.
  const checked = checkedJsonBodies(
    DEFAULT_MAX_JSON_DEPTH,
    isRawDocument,
    undefined,
    undefined,
    (request) => workspaceRouted(request.method, request.url),
    maxJsonItems + ENVELOPE_ITEMS
  )
  const maxBodySize = ByteSize.bytes(maxBodyBytes)
  // Query parameters an endpoint does not declare: a 400 naming them, as on /v1 (a typo such as
  // `?lmit=10` had answered every task).
  const knownQuery = refuseUnknownQueryParams(WorkspaceApi)
  // Every failure is answered here (shapeErrors); the router's types ask a global middleware to
  // leave errors alone, hence the widened error type.
  return HttpRouter.middleware(
    (app: RouterApp): Effect.Effect<
      HttpServerResponse.HttpServerResponse,
      Types.unhandled,
      HttpServerRequest.HttpServerRequest
    > =>
      shapeErrors(
        // Before the body is read: a web page on any site could otherwise post here (a field-less
        // form post has no body to refuse); servers, the CLI and same-origin pages send no such marks.
        noBrowserWrites(limit(knownQuery(octetDocuments(
          checked(forwardedActor(
            withForwardedRequest(Effect.provideService(app, HttpIncomingMessage.MaxBodySize, maxBodySize)).pipe(
              Effect.catchCause((cause) => {
                const failure = Cause.findErrorOption(cause)
                return Option.isSome(failure) && isNotImplemented(failure.value)
                  ? Effect.succeed(notImplemented(failure.value))
                  : Effect.failCause(cause)
              })
            )
          ))
        )))),
        WORKSPACE_ROUTES
      ),
    { global: true }
  )
}

const noBrowserWrites = refuseAllCrossSiteWrites("the workspace API takes no writes from web pages on other sites")

/**
 * The caller's request id and arrival time (src/services/arrival.ts) in the
 * handlers' context: the store binds a decision to the step current when the gateway received it.
 */
const withForwardedRequest = <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    let stamped: number | undefined
    try {
      // Our Node server (src/http/server/nodeServer.ts) is HTTP/1: its requests are IncomingMessages.
      stamped = arrivalOf(NodeHttpServerRequest.toIncomingMessage(request) as http.IncomingMessage)
    } catch {
      stamped = undefined
    }
    return Effect.provideService(app, CurrentRequest, forwardedRequestContextOf(request.headers, stamped))
  })

const isDocumentPost = (request: HttpServerRequest.HttpServerRequest) =>
  request.method === "POST" && /\/documents\/?(?:\?|$)/.test(request.url)

const isOctetStream = (request: HttpServerRequest.HttpServerRequest) =>
  /^application\/octet-stream\s*(;|$)/i.test(request.headers["content-type"] ?? "")

/** The one body that is raw bytes by contract: a document's, sent as octet-stream. */
const isRawDocument = (request: HttpServerRequest.HttpServerRequest) => isDocumentPost(request) && isOctetStream(request)

/**
 * A document sent as anything but octet-stream answers 415 in the spec's error shape, before its
 * body is read (Effect 4's HttpApiBuilder would answer a plain-text 415 of its own).
 */
const octetDocuments = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E | UnsupportedMediaType, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request): Effect.Effect<
    HttpServerResponse.HttpServerResponse,
    E | UnsupportedMediaType,
    R
  > => {
    // A path no route has (`POST /workspace/nope/documents`): the router's 404, not a 415.
    if (!isDocumentPost(request) || isOctetStream(request) || !workspaceRouted(request.method, request.url)) return app
    const type = request.headers["content-type"]
    return Effect.fail(unsupportedMediaType(type, "application/octet-stream"))
  })

/** WorkspaceApi's routes with their handlers, registered on the router being built. */
export const WorkspaceHandlersLive = (service: WorkspaceClientService, extras?: WorkspaceExtras) =>
  HttpApiBuilder.layer(WorkspaceApi).pipe(Layer.provide(groups(service, extras)))

/**
 * GET /workspace/openapi.json and the API reference page at /workspace/docs (no network needed),
 * built on first use like the gateway's (src/gateway/Gateway.ts): the page inlines a 3 MB script.
 */
export const WorkspaceDocsLive = Layer.mergeAll(
  lazyRoutes([WORKSPACE_OPENAPI_PATH], async () => {
    const document = HttpServerResponse.jsonUnsafe(OpenApi.fromApi(WorkspaceApi))
    return HttpRouter.add("GET", WORKSPACE_OPENAPI_PATH, Effect.succeed(document))
  }),
  lazyRoutes(
    [`${WORKSPACE_PREFIX}/docs`],
    async () =>
      (await import("effect/http-api/HttpApiScalar")).layer(WorkspaceApi, {
        path: `${WORKSPACE_PREFIX}/docs`,
        scalar: { withDefaultFonts: false }
      }),
    // The console's security headers, the page's inline scripts allowed by hash.
    withPageSecurity
  )
)

/** What building the API's routes needs from the platform (NodeHttpServer.layer gives all of it). */
export type WorkspaceServices = Layer.Services<ReturnType<typeof WorkspaceHandlersLive>>

/**
 * WorkspaceApi as a self-contained app (its own router, middleware and docs, built with a
 * separate memo map so none of it is shared with another router in the same process), behind
 * `options.adminToken` when set: for a listener of its own (the admin listener), or mounted
 * under /workspace in a server that serves other routes, e.g.
 * `HttpRouter.add("*", "/workspace/*", app)` (its routes include the prefix).
 */
export const makeWorkspaceHttpApp = (
  service: WorkspaceClientService,
  extras?: WorkspaceExtras,
  options: WorkspaceServerOptions = {}
): Effect.Effect<
  Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest | Scope.Scope>,
  never,
  Scope.Scope | Exclude<WorkspaceServices, HttpRouter.HttpRouter>
> =>
  Effect.gen(function*() {
    const routes = Layer.mergeAll(
      WorkspaceHandlersLive(service, extras),
      WorkspaceDocsLive,
      WorkspaceMiddleware(options.maxBodyBytes, options.maxJsonItems)
    )
    // Built inside a first request too (the admin listener): Effect 4's HttpApi handlers run in
    // the context the routes were built in, so that request must not be in it, or every later
    // request's handler would read its (already consumed) body and its headers.
    const served = yield* withRouterConfig(HttpRouter.toHttpEffect(routes)).pipe(
      Effect.updateContext((context: Context.Context<Scope.Scope | Exclude<WorkspaceServices, HttpRouter.HttpRouter>>) =>
        Context.omit(CurrentRequest)(withoutRequest(context))
      )
    )
    const app = requireBearer(Option.fromNullishOr(options.adminToken))(shapeErrors(served, WORKSPACE_ROUTES))
    return options.tracing === true ? app : Effect.provideService(app, References.TracerEnabled, false)
  })

/**
 * WorkspaceApi served over `service` (and `extras` for the registry and GL webhook). Needs an
 * HttpServer and the platform's services (NodeHttpServer.layer gives both).
 */
export const WorkspaceApiLive = (
  service: WorkspaceClientService,
  extras?: WorkspaceExtras,
  options: WorkspaceServerOptions = {}
): Layer.Layer<never, never, HttpServer.HttpServer | Exclude<WorkspaceServices, HttpRouter.HttpRouter>> => {
  const served = Layer.unwrap(
    Effect.map(makeWorkspaceHttpApp(service, extras, options), (app) => HttpServer.serve(app))
  )
  // Off, the tracer is off for every fiber the server runs: the request span included.
  return options.tracing === true ? served : served.pipe(Layer.provide(Layer.succeed(References.TracerEnabled, false)))
}
