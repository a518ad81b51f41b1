/**
 * The WorkspaceClient port over HTTP: a client of WorkspaceApi derived with HttpApiClient,
 * selected when SVC_WORKSPACE_URL is set.
 *
 * - Connection reuse: Node's http client over keep-alive agents, at most
 *   SVC_WORKSPACE_MAX_CONNECTIONS connections in all (the calls', the downloads', the tenant
 *   lookup's: HttpWorkspaceClientLive below); a call past them waits for one.
 * - One deadline per request (src/services/Deadline.ts) bounds every attempt, retry and backoff
 *   of every call; a 504 means it passed. An attempt unanswered after `timeoutMs` is abandoned
 *   and retried; failures are retried with jittered exponential backoff while it fits. Writes
 *   are retried too: each carries an idempotency key (the request's, else one per call), the
 *   same on every attempt, so the workspace stores a write once however often it arrives.
 * - Upstream 404/400/409 come back as NotFound/BadRequest/Conflict with the upstream message
 *   (and currentStatus/code); an unreachable upstream (refused, DNS, reset) is a 503; upstream
 *   5xx, unexpected statuses and undecodable bodies are a 502.
 * - Downloads stream: the body is handed on chunk by chunk, never buffered whole.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as HttpApiClient from "effect/http-api/HttpApiClient"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import {
  BadGateway,
  BadRequest,
  BadRequestWire,
  Conflict,
  ConflictWire,
  Forbidden,
  ForbiddenWire,
  GatewayTimeout,
  InternalServerError,
  NotFound,
  NotFoundWire,
  PayloadTooLarge,
  ServiceUnavailable,
  type UpstreamError
} from "../../api/errors.js"
import { randomUUID } from "node:crypto"
import { IDEMPOTENCY_KEY_HEADER } from "../../api/idempotency.js"
import { encodePathSegment } from "../../client/pathParams.js"
import { upstreamHeaders } from "../../observability/requestContext.js"
import { arrivalHeaders } from "../../services/arrival.js"
import { ACTOR_FORWARD_HEADER, actorNow, currentIdentity, IDENTITY_FORWARD_HEADER } from "../../services/Actor.js"
import { encodeActorHeader, encodeIdentityHeader } from "../../services/actorValue.js"
import { currentDeadline, type Deadline } from "../../services/Deadline.js"
import { currentIdempotencyKey, type TaskQuery, WorkspaceClient, type WorkspaceClientService } from "../../upstream/WorkspaceClient.js"
import { composeTaskBoard } from "../../upstream/taskBoard.js"
import { DOCUMENT_HEADER } from "../../upstream/documents.js"
import { MAX_NEXT_STEP_IDS } from "../../upstream/tasks.js"
import { WorkspaceApi } from "../../upstream/WorkspaceApi.js"
import { Document, Tenant, wholeBytes } from "../../upstream/model.js"
import { defaultOf } from "../../config/settings.js"
import { onReaderStall } from "./readerStall.js"

export interface HttpWorkspaceClientOptions {
  /**
   * Time after which an attempt (from sending the request to the decoded response; download: to
   * the headers) is abandoned and retried, while retries remain; a download's body may stall no
   * longer than this between chunks.
   */
  readonly timeoutMs: number
  /** How many times a call is retried after an upstream failure or a timed-out attempt (0: never). */
  readonly retries: number
  /**
   * Connections to the workspace service at most (SVC_WORKSPACE_MAX_CONNECTIONS, default 192):
   * one for the tenant lookup, downloads at most a third, the calls the rest; a call past them
   * waits for a free one.
   */
  readonly maxConnections?: number | undefined
  /**
   * The budget of a call made outside any request's deadline (src/services/Deadline.ts); default:
   * every attempt at `timeoutMs` plus the backoffs between them.
   */
  readonly deadlineMs?: number | undefined
  /** The first backoff delay; each retry doubles it, with ±20% jitter (default 100 ms). */
  readonly retryBaseMs?: number | undefined
  /** Client spans per request (default off). */
  readonly tracing?: boolean | undefined
  /** Sent as `Authorization: Bearer <token>` on every call (SVC_WORKSPACE_TOKEN): the service's SVC_ADMIN_TOKEN. */
  readonly token?: Redacted.Redacted<string> | undefined
}

type Kept = NotFound | BadRequest | Conflict | Forbidden | PayloadTooLarge
type KeptTag = Kept["_tag"]
type KeptOf<K extends KeptTag> = Extract<Kept, { readonly _tag: K }>

const isUpstream = (e: unknown): e is UpstreamError =>
  e instanceof BadGateway || e instanceof ServiceUnavailable || e instanceof GatewayTimeout

const isKept = (e: unknown): e is Kept =>
  e instanceof NotFound || e instanceof BadRequest || e instanceof Conflict || e instanceof Forbidden || e instanceof PayloadTooLarge

/** One line for the log: what failed, where, and the socket or decode detail under it. */
const detailOf = (u: unknown): string => {
  if (!(u instanceof Error)) return String(u)
  const cause = (u as { cause?: unknown }).cause
  const code = (cause as { code?: unknown } | undefined)?.code
  const under = cause instanceof Error ? `: ${typeof code === "string" ? `${code} ` : ""}${cause.message}` : ""
  return `${u.message}${under}`
}

/** An attempt abandoned after `timeoutMs` with time left before the deadline: retried, never answered. */
class AttemptTimedOut {
  readonly _tag = "AttemptTimedOut"
}

/** A failure of the response side (status, body, decoding), kept apart from request-side ones. */
class ResponseFailure {
  constructor(readonly cause: unknown) {}
}

/**
 * What the response side of a call failed with, as the gateway's errors: the 4xx classes pass
 * through as decoded; everything else the upstream said is a 502. Messages name no address and
 * no socket detail (they reach the gateway's clients); `call` logs the raw failure.
 */
const fromResponseFailure = (e: unknown): Kept | UpstreamError => {
  // A body past the service's own cap (lower than this gateway's SVC_MAX_BODY_BYTES): the
  // client's 413, with the service's limit in words; sending it again would be refused again.
  if (e instanceof PayloadTooLarge) return new PayloadTooLarge({ message: `The workspace service refuses it: ${e.message}` })
  if (isKept(e)) return e
  if (e instanceof InternalServerError || isUpstream(e)) {
    return new BadGateway({ message: `The workspace service answered ${e.statusCode} ${e.error}: ${e.message}` })
  }
  if (Schema.isSchemaError(e)) {
    return new BadGateway({ message: "The workspace service sent a response that does not match its contract" })
  }
  if (HttpClientError.isHttpClientError(e) && e.response !== undefined) {
    // HttpApiClient fails an undeclared status (a 401 without the admin token, say) as a
    // DecodeError with no cause; one with a cause is a body that could not be read.
    const undeclared = e.reason._tag === "StatusCodeError" || (e.reason._tag === "DecodeError" && e.reason.cause === undefined)
    return new BadGateway({
      message: undeclared
        ? `The workspace service answered an unexpected status ${e.response.status}`
        : "The workspace service response could not be read"
    })
  }
  return new BadGateway({ message: "The workspace service call failed" })
}

/** Failures before or while sending: unreachable (refused, DNS, reset) is a 503, an unencodable request a 400. */
const fromCallFailure = (e: unknown): Kept | UpstreamError => {
  if (e instanceof ResponseFailure) return fromResponseFailure(e.cause)
  // The service's 413 comes back decoded, not as a response failure: said as its own (above).
  if (e instanceof PayloadTooLarge) return fromResponseFailure(e)
  if (isKept(e) || isUpstream(e)) return e
  if (HttpClientError.isHttpClientError(e) && e.response === undefined) {
    return e.reason._tag === "TransportError"
      ? new ServiceUnavailable({ message: "The workspace service is unreachable" })
      : new BadGateway({ message: `The workspace request could not be sent (${REQUEST_REASONS[e.reason._tag] ?? e.reason._tag})` })
  }
  if (Schema.isSchemaError(e)) {
    return new BadRequest({ message: `Invalid request to the workspace service: ${e.message}` })
  }
  return fromResponseFailure(e)
}

/**
 * An error answer whose body is not JSON (a proxy's plain-text 500, say) fails here as the decode
 * error it is, before HttpApiClient decodes it: Effect 4.1's HttpApiClient would combine that
 * decode error with a status error, and Cause.combine hashes both, reading the response's
 * `jsonUnsafe` getter, which throws on such a body: the call would die instead of failing.
 */
const rejectUnreadableErrorBody = (
  response: HttpClientResponse.HttpClientResponse
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> =>
  // The body is read once and kept: the decoder reads it again from memory.
  response.status < 400 ? Effect.succeed(response) : Effect.as(response.json, response)

/** The request-side failures by the names Effect 3 gave them (they appear in the 502's message). */
const REQUEST_REASONS: Readonly<Record<string, string>> = { EncodeError: "Encode", InvalidUrlError: "InvalidUrl" }

const errorWires: Readonly<Record<number, (u: unknown) => Effect.Effect<Kept, Schema.SchemaError>>> = {
  400: Schema.decodeUnknownEffect(BadRequestWire),
  403: Schema.decodeUnknownEffect(ForbiddenWire),
  404: Schema.decodeUnknownEffect(NotFoundWire),
  409: Schema.decodeUnknownEffect(ConflictWire)
}

/** The error a non-2xx response stands for, for calls made without HttpApiClient (downloads). */
const errorOfResponse = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<never, Kept | UpstreamError> => {
  const wire = errorWires[response.status]
  if (wire === undefined) {
    return Effect.flatMap(
      Effect.option(response.json),
      (body) => {
        const message = Option.isSome(body) && typeof (body.value as { message?: unknown })?.message === "string"
          ? `: ${(body.value as { message: string }).message}`
          : ""
        return Effect.fail(new BadGateway({ message: `The workspace service answered ${response.status}${message}` }))
      }
    )
  }
  return response.json.pipe(
    Effect.flatMap(wire),
    Effect.matchEffect({
      onFailure: (e) => Effect.fail(fromResponseFailure(e)),
      onSuccess: (error) => Effect.fail(error)
    })
  )
}

/**
 * Path parameters: HttpApiClient (Effect 4) percent-encodes each itself, so a slug or composite id
 * cannot change the route (`/`, `?`, `#`); encoding them here too would encode them twice.
 */
const enc = <P extends Record<string, string>>(params: P): P => params

const fillPath = (path: string, params: Record<string, string>): string =>
  path.replace(/:(\w+)/g, (_, name: string) => encodePathSegment(params[name]!))

/** A TaskQuery as the list's query parameters (none: every task). */
const taskQueryParams = (query: TaskQuery | undefined) =>
  query === undefined ? {} : {
    ...(query.status !== undefined ? { status: query.status } : {}),
    ...(query.currentSteps !== undefined ? { steps: query.currentSteps } : {}),
    ...(query.afterId !== undefined ? { after: query.afterId } : {}),
    ...(query.limit !== undefined ? { limit: query.limit } : {})
  }

const openDocumentPath = WorkspaceApi.groups.documents.endpoints.openDocument.path

const decodeDocumentHeader = Schema.decodeUnknownEffect(Schema.fromJsonString(Document))

/**
 * Clients besides the calls' (each defaults to it); the Layer gives each an agent of its own.
 * - `downloads` streams documents: downloads hold their connection for as long as their reader
 *   takes, and never take the connections the calls wait for.
 * - `lookups` resolves the tenant (the tenant's binding, /readyz): a probe says whether the
 *   service answers, not how long the calls' queue is (behind a burst at the cap, the readiness
 *   lookup waited past its 2 s and /readyz answered 503 while every list was served).
 */
export interface WorkspaceClients {
  readonly downloads?: HttpClient.HttpClient | undefined
  readonly lookups?: HttpClient.HttpClient | undefined
}

const TenantJson = Schema.decodeUnknownEffect(Tenant)

/** The port over an HttpClient (the Layer below supplies Node's, with keep-alive agents). */
export const makeHttpWorkspaceClient = (
  baseUrl: string,
  options: HttpWorkspaceClientOptions,
  clients: WorkspaceClients = {}
): Effect.Effect<WorkspaceClientService, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const base = baseUrl.replace(/\/+$/, "")
    const timeout = Duration.millis(options.timeoutMs)
    const token = options.token
    const calls = yield* HttpClient.HttpClient
    const decorate = (client: HttpClient.HttpClient) => client.pipe(
      options.tracing === true
        ? (c) => c
        : HttpClient.transform((effect) => Effect.provideService(effect, HttpClient.TracerDisabledWhen, () => true)),
      token === undefined ? (c) => c : HttpClient.mapRequest(HttpClientRequest.bearerToken(Redacted.value(token))),
      // The request's x-request-id and arrival time (and the caller's traceparent when not tracing) on every call,
      // and who acts (x-svc-actor, src/services/Actor.ts) when someone is named.
      // The edge's groups and whether assignment holds travel in x-svc-identity when they say anything.
      HttpClient.mapRequestEffect((request) =>
        Effect.zipWith(
          Effect.zip(upstreamHeaders(options.tracing === true), arrivalHeaders),
          Effect.zip(actorNow, currentIdentity),
          ([headers, arrival], [actor, identity]) =>
            HttpClientRequest.setHeaders(request, {
              ...headers,
              ...arrival,
              ...(actor === undefined ? {} : { [ACTOR_FORWARD_HEADER]: encodeActorHeader(actor) }),
              ...(identity.enforced || identity.groups.length > 0 ? { [IDENTITY_FORWARD_HEADER]: encodeIdentityHeader(identity) } : {})
            })
        ))
    )
    const http = decorate(calls)
    // Scoped: the request is given up when its scope closes (see openDocument), not when its
    // response is garbage-collected.
    const scopedDownloadHttp = HttpClient.withScope(clients.downloads === undefined ? http : decorate(clients.downloads))
    const lookupHttp = clients.lookups === undefined ? http : decorate(clients.lookups)
    const resolveTenantPath = WorkspaceApi.groups.tenants.endpoints.resolveTenant.path
    /** GET .../tenants/by-slug/:slug on the lookups' connection; its errors as HttpApiClient's would be. */
    const resolveTenantOn = (slug: string) =>
      Effect.scoped(Effect.gen(function*() {
        const response = yield* lookupHttp.execute(HttpClientRequest.get(base + fillPath(resolveTenantPath, { slug })))
        if (response.status !== 200) return yield* errorOfResponse(response)
        return yield* Effect.flatMap(response.json, TenantJson).pipe(Effect.mapError((e) => new ResponseFailure(e)))
      }))
    const api = yield* HttpApiClient.makeWith(WorkspaceApi, {
      httpClient: http.pipe(HttpClient.transform(Effect.flatMap(rejectUnreadableErrorBody))),
      baseUrl: base,
      transformResponse: (effect) => Effect.mapError(effect, (e) => (isKept(e) ? e : new ResponseFailure(e)))
    })
    const retries = Math.max(0, options.retries)
    const retryBaseMs = options.retryBaseMs ?? 100
    /** Backoff before retry n (0-based): the base doubling, with ±20% jitter. */
    const backoffMs = (n: number) => retryBaseMs * 2 ** n * (0.8 + Math.random() * 0.4)
    /** The budget of a call made outside any request's deadline (e.g. at start): every attempt and backoff. */
    const ownBudgetMs = options.deadlineMs ?? options.timeoutMs * (retries + 1) + retryBaseMs * 2 ** (retries + 1)
    const deadlinePassed = (deadline: Deadline) =>
      new GatewayTimeout({
        message: `The workspace service did not answer within the request's deadline of ${deadline.budgetMs} ms`
      })

    /** One attempt's errors mapped: a 4xx the method does not declare is the upstream breaking the contract (502). */
    const mapped = <A, K extends KeptTag>(effect: Effect.Effect<A, unknown>, keep: ReadonlyArray<K>) =>
      Effect.catch(effect, (e) => {
        const mapped = fromCallFailure(e)
        const error: KeptOf<K> | UpstreamError =
          isUpstream(mapped) || (keep as ReadonlyArray<KeptTag>).includes(mapped._tag)
            ? mapped as KeptOf<K> | UpstreamError
            : new BadGateway({
              message: `The workspace service answered ${mapped.statusCode} where its contract allows none: ${mapped.message}`
            })
        // The detail (address, socket error, decode issue) goes to the log only.
        const raw = e instanceof ResponseFailure ? e.cause : e
        return isUpstream(error) && error !== raw
          ? Effect.andThen(Effect.logWarning(`workspace call failed: ${error.message} (${detailOf(raw)})`), Effect.fail(error))
          : Effect.fail(error)
      })

    /**
     * One port call, inside the request's deadline (src/services/Deadline.ts; a call outside
     * any request gets a budget of its own):
     * - an attempt not answered after `timeoutMs` is abandoned and retried at once, while
     *   retries remain; the last attempt may take all the time left, so a 504 means exactly
     *   that the deadline passed;
     * - a refused connection (503) or an upstream 5xx / off-contract answer (502) is retried
     *   after a jittered backoff when that still fits before the deadline, and answered as it
     *   is otherwise: a refused connection is never turned into a 504;
     * - only `retried` calls are retried: reads, and writes, which all carry an idempotency key.
     */
    const call = <A, K extends KeptTag = never>(
      effect: Effect.Effect<A, unknown>,
      retried: boolean,
      keep: ReadonlyArray<K>
    ): Effect.Effect<A, KeptOf<K> | UpstreamError> =>
      Effect.gen(function*() {
        const deadline = Option.getOrElse(
          yield* Effect.service(currentDeadline),
          (): Deadline => ({ at: Date.now() + ownBudgetMs, budgetMs: ownBudgetMs })
        )
        const attemptTimedOut = new AttemptTimedOut()
        for (let attempt = 0;; attempt++) {
          const remaining = deadline.at - Date.now()
          if (remaining <= 0) return yield* Effect.fail(deadlinePassed(deadline))
          const last = !retried || attempt >= retries
          const limit = last ? remaining : Math.min(options.timeoutMs, remaining)
          const outcome = yield* Effect.result(
            mapped(effect, keep).pipe(
              Effect.timeoutOrElse({
                duration: Duration.millis(limit),
                orElse: () =>
                  Effect.fail<KeptOf<K> | UpstreamError | AttemptTimedOut>(
                    limit === remaining ? deadlinePassed(deadline) : attemptTimedOut
                  )
              })
            )
          )
          if (Result.isSuccess(outcome)) return outcome.success
          const error = outcome.failure
          if (error instanceof AttemptTimedOut) {
            yield* Effect.logWarning(`workspace call: no answer within ${options.timeoutMs} ms; retrying`)
            continue
          }
          if (last || !isUpstream(error) || error instanceof GatewayTimeout) return yield* Effect.fail(error)
          const delay = backoffMs(attempt)
          if (Date.now() + delay >= deadline.at) return yield* Effect.fail(error)
          yield* Effect.sleep(Duration.millis(delay))
        }
      })

    /**
     * A write: one key for every attempt, so a retry after a lost answer returns the first result.
     * The key is the request's (the gateway's middleware), else one for this call and its retries.
     * Its 504 says that the write may have been carried out all the same (the workspace may have
     * committed it after the gateway stopped waiting: a decision applied after its 504).
     */
    const write = <A, K extends KeptTag = never>(
      request: (headers: { readonly "idempotency-key": string }) => Effect.Effect<A, unknown>,
      keep: ReadonlyArray<K>
    ): Effect.Effect<A, KeptOf<K> | UpstreamError> =>
      Effect.flatMap(Effect.service(currentIdempotencyKey), (clientKey) =>
        call(request({ [IDEMPOTENCY_KEY_HEADER]: Option.getOrElse(clientKey, () => randomUUID()) }), RETRIED, keep).pipe(
          Effect.mapError((e) =>
            e instanceof GatewayTimeout
              ? new GatewayTimeout({
                message: `${e.message}; the write may still have been carried out: ${
                  Option.isSome(clientKey)
                    ? "send it again with the same Idempotency-Key to learn its outcome"
                    : "read its result before sending it again (with an Idempotency-Key a retry is safe)"
                }`
              })
              : e
          )
        ))

    const READ = true
    const RETRIED = true
    const NONE: ReadonlyArray<never> = []

    /**
     * A download holds its connection until `held` closes: when its body ends or breaks off, when
     * the attempt fails or is abandoned, and at the latest when the caller's scope closes (the
     * request's, once its answer is written). A body nobody runs (a HEAD answer, read_file
     * refusing a large document, a client gone before the answer) otherwise held the connection
     * until the response happened to be garbage-collected, and downloads have few of them.
     */
    const openDocument: WorkspaceClientService["openDocument"] = (tenantId, documentId) =>
      Effect.flatMap(Effect.service(Scope.Scope), (caller) =>
        call(
          Effect.flatMap(Scope.fork(caller), (held) =>
            openDocumentOn(held, tenantId, documentId).pipe(
              Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : Scope.close(held, exit))
            )),
          READ,
          ["NotFound"]
        ))

    const openDocumentOn = (held: Scope.Closeable, tenantId: string, documentId: string) =>
      Effect.gen(function*() {
        const request = HttpClientRequest.get(base + fillPath(openDocumentPath, { tenantId, documentId }))
        const response = yield* Scope.provide(scopedDownloadHttp.execute(request), held)
        if (response.status !== 200) return yield* errorOfResponse(response)
        const header = response.headers[DOCUMENT_HEADER]
        const document = yield* Effect.mapError(
          decodeDocumentHeader(header === undefined ? undefined : decodeURIComponent(header)),
          () => new BadGateway({ message: `The workspace download lacks a valid ${DOCUMENT_HEADER} header` })
        )
        const body = response.stream.pipe(
          Stream.ensuring(Scope.close(held, Exit.void)),
          Stream.tapError((e) => Effect.logWarning(`workspace download of ${documentId} broke off (${detailOf(e)})`)),
          Stream.mapError(() => new BadGateway({ message: `The workspace download of ${documentId} broke off` })),
          Stream.timeoutOrElse({
            duration: timeout,
            orElse: () =>
              Stream.fail(
                new GatewayTimeout({ message: `The workspace download of ${documentId} stalled for ${options.timeoutMs} ms` })
              )
          }),
          // A reader that takes nothing for as long gives the connection up too (its answer then
          // breaks off when it reads on): downloads have a third of the connections, and readers
          // that stop would otherwise hold them for as long as they keep their sockets open.
          (stream) =>
            onReaderStall(
              stream,
              options.timeoutMs,
              Effect.andThen(
                Effect.logWarning(
                  `workspace download of ${documentId}: the reader took nothing for ${options.timeoutMs} ms; its connection is given up`
                ),
                Scope.close(held, Exit.void)
              )
            )
        )
        return { document, body }
      })

    /**
     * The board in one round trip. A service without the endpoint (an older version) answers 404
     * as for a missing entity (in whatever body): the board is then composed from the separate calls (which tell a
     * missing entity by its own 404), and once a composed board was found, so that the 404 was
     * the endpoint's, every later board is composed directly. Once the endpoint has answered, its
     * 404 is the entity's.
     */
    let boardMissing = false
    let boardSeen = false
    const composed = (tenantId: string, entityId: string, query: TaskQuery | undefined) =>
      composeTaskBoard(service)(tenantId, entityId, query)
    const listTaskBoard: NonNullable<WorkspaceClientService["listTaskBoard"]> = (tenantId, entityId, query) =>
      boardMissing
        ? composed(tenantId, entityId, query)
        : call(
          api.tenants.listTaskBoard({ params: enc({ tenantId, entityId }), query: taskQueryParams(query) }).pipe(
            // A service without the endpoint may answer its 404 in any body (an HTML page, say).
            Effect.catch((e) => {
              const raw = e instanceof ResponseFailure ? e.cause : e
              return HttpClientError.isHttpClientError(raw) && raw.response?.status === 404
                ? Effect.fail(new NotFound({ message: `Entity ${entityId} not found` }))
                : Effect.fail(e)
            })
          ),
          READ,
          ["NotFound", "BadRequest"]
        ).pipe(
          Effect.tap(() =>
            Effect.sync(() => {
              boardSeen = true
            })
          ),
          Effect.catchTag("NotFound", (notFound) =>
            boardSeen ? Effect.fail(notFound) : Effect.tap(composed(tenantId, entityId, query), () => {
              if (boardMissing) return Effect.void
              boardMissing = true
              return Effect.logWarning("the workspace service has no task board endpoint (404): composing the board from its separate calls")
            }))
        )

    const service: WorkspaceClientService = {
      resolveTenant: (slug) =>
        call(clients.lookups === undefined ? api.tenants.resolveTenant({ params: enc({ slug }) }) : resolveTenantOn(slug), READ, ["NotFound"]),
      listEntities: (tenantId) => call(api.tenants.listEntities({ params: enc({ tenantId }) }), READ, NONE),
      getEntity: (tenantId, entityId) => call(api.tenants.getEntity({ params: enc({ tenantId, entityId }) }), READ, ["NotFound"]),
      listTasks: (tenantId, entityId, query) =>
        call(api.tenants.listTasks({ params: enc({ tenantId, entityId }), query: taskQueryParams(query) }), READ, ["BadRequest"]),
      listTaskBoard,
      getTask: (taskId) => call(api.tasks.getTask({ params: enc({ taskId }) }), READ, ["NotFound"]),
      getNextStep: (tenantId, taskId) =>
        call(api.tasks.getNextStep({ params: enc({ tenantId, taskId }) }), READ, ["NotFound"]),
      // One HTTP call per MAX_NEXT_STEP_IDS ids (one for any task list up to that size).
      getNextSteps: (tenantId, taskIds) =>
        Effect.map(
          Effect.forEach(
            Array.from({ length: Math.ceil(taskIds.length / MAX_NEXT_STEP_IDS) }, (_, i) =>
              taskIds.slice(i * MAX_NEXT_STEP_IDS, (i + 1) * MAX_NEXT_STEP_IDS)),
            (group) => call(api.tasks.getNextSteps({ params: enc({ tenantId }), payload: { taskIds: group } }), READ, NONE)
          ),
          (groups) => groups.flat()
        ),
      listWorkflows: (tenantId) => call(api.tenants.listWorkflows({ params: enc({ tenantId }) }), READ, NONE),
      getRunbook: (tenantId, workflowId) =>
        call(api.tenants.getRunbook({ params: enc({ tenantId, workflowId }) }), READ, ["NotFound"]),
      createTask: (tenantId, entityId, input) =>
        write(
          (headers) => api.tenants.createTask({ params: enc({ tenantId, entityId }), headers, payload: input }),
          ["NotFound", "BadRequest", "Conflict"]
        ),
      getSnapshots: (tenantId, taskId) =>
        call(api.tasks.getSnapshots({ params: enc({ tenantId, taskId }) }), READ, ["NotFound"]),
      signal: (tenantId, signal) =>
        write((headers) => api.tasks.signal({ params: enc({ tenantId }), headers, payload: signal }), [
          "NotFound",
          "BadRequest",
          "Conflict",
          "Forbidden"
        ]),
      appendEvent: (tenantId, taskId, event) =>
        write((headers) => api.tasks.appendEvent({ params: enc({ tenantId, taskId }), headers, payload: event }), ["NotFound", "Conflict", "BadRequest"]),
      recordEvent: (tenantId, taskId, record) =>
        write((headers) => api.tasks.recordEvent({ params: enc({ tenantId, taskId }), headers, payload: record }), ["NotFound", "Conflict"]),
      listEvents: (tenantId, taskId, page = {}) =>
        call(
          api.tasks.listEvents({
            params: enc({ tenantId, taskId }),
            query: {
              ...(page.after !== undefined ? { after: page.after } : {}),
              ...(page.limit !== undefined ? { limit: page.limit } : {}),
              ...(page.maxBytes !== undefined ? { maxBytes: page.maxBytes } : {})
            }
          }),
          READ,
          ["NotFound", "BadRequest"]
        ),
      listDocuments: (tenantId, taskId, query) =>
        call(
          api.documents.listDocuments({
            params: enc({ tenantId, taskId }),
            query: { limit: query.limit, ...(query.source !== undefined ? { source: query.source } : {}) }
          }),
          READ,
          NONE
        ),
      putDocument: (tenantId, doc, signal) =>
        // Sent whole: the workspace API's body is one Uint8Array (a raw upload is read back from its spool).
        Effect.flatMap(wholeBytes(doc.bytes), (bytes) =>
        write(
          (headers) =>
            api.documents.putDocument({
            params: enc({ tenantId, taskId: doc.taskId }),
            headers,
            query: {
              source: doc.source,
              filename: doc.filename,
              contentType: doc.contentType,
              ...(doc.period !== undefined ? { period: doc.period } : {}),
              ...(doc.schemaSlug !== undefined ? { schemaSlug: doc.schemaSlug } : {}),
              ...Option.match(signal, {
                onNone: () => ({}),
                onSome: (s) => ({
                  signalTaskId: s.taskId,
                  signalName: s.name,
                  signalPayload: s.payload,
                  ...(s.expectedStep !== undefined ? { signalExpectedStep: s.expectedStep } : {})
                })
              })
            },
            payload: bytes
          }),
          ["NotFound", "BadRequest", "Conflict", "Forbidden", "PayloadTooLarge"]
        )),
      openDocument,
      ingestData: (tenantId, batch, signal) =>
        write(
          (headers) =>
            api.records.ingestData({
            params: enc({ tenantId, taskId: batch.taskId }),
            headers,
            payload: {
              ...(batch.kind !== undefined ? { kind: batch.kind } : {}),
              rows: batch.rows,
              ...Option.match(signal, {
                onNone: () => ({}),
                onSome: (s) => ({
                  signal: { taskId: s.taskId, name: s.name, ...(s.expectedStep !== undefined ? { expectedStep: s.expectedStep } : {}) }
                })
              })
            }
          }),
          ["NotFound", "BadRequest", "Conflict", "Forbidden", "PayloadTooLarge"]
        ),
      rejectRow: (tenantId, ledger, rowId) =>
        write(
          (headers) => api.records.rejectRow({ params: enc({ tenantId, ledger, rowId }), headers }),
          ["NotFound", "BadRequest", "Conflict"]
        ),
      // Retried with its key: a retry returns the first result, it cannot redo the edit over a later one.
      updateRow: (tenantId, ledger, rowId, field, value, expected = Option.none()) =>
        write(
          (headers) => api.records.updateRow({ params: enc({ tenantId, ledger, rowId }), headers, payload: { field, value, ...(Option.isSome(expected) ? { expected: expected.value } : {}) } }),
          ["NotFound", "BadRequest", "Conflict"]
        ),
      getGlConnection: (tenantId) =>
        call(
          Effect.map(api.gl.getGlConnection({ params: enc({ tenantId }) }), (r) => Option.fromNullishOr(r.connection)),
          READ,
          NONE
        ),
      createGlSession: (tenantId, serviceId) =>
        write(
          (headers) =>
            api.gl.createGlSession({ params: enc({ tenantId }), headers, payload: serviceId !== undefined ? { serviceId } : {} }),
          ["NotFound", "BadRequest", "Conflict"]
        ),
      deleteGlConnection: (tenantId) =>
        write((headers) => api.gl.deleteGlConnection({ params: enc({ tenantId }), headers }), ["Conflict"]),
      // A lookup, so retried like a read (POST only to keep the hash out of URLs and logs).
      findAgentByKeyHash: (tenantId, keyHash) =>
        call(api.registry.findAgentByKeyHash({ params: enc({ tenantId }), payload: { keyHash } }), READ, ["NotFound"]),
      inbox: (tenantId, query) => call(api.inbox.inbox({ params: enc({ tenantId }), payload: query }), READ, NONE),
      claimStep: (tenantId, taskId, override) =>
        write((headers) => api.inbox.claimStep({ params: enc({ tenantId, taskId }), headers, payload: { override } }), [
          "NotFound",
          "BadRequest",
          "Conflict",
          "Forbidden"
        ]),
      releaseClaim: (tenantId, taskId) =>
        write((headers) => api.inbox.releaseClaim({ params: enc({ tenantId, taskId }), headers }), ["NotFound", "Forbidden", "Conflict"])
    }
    return service
  })

const IDLE_SOCKET_MS = 4_000
const DEFAULT_WORKSPACE_MAX_CONNECTIONS = defaultOf("SVC_WORKSPACE_MAX_CONNECTIONS")

/** How `maxConnections` is shared: one for the tenant lookup, downloads at most a third (at least one), the calls the rest. */
const connectionShares = (maxConnections: number): { readonly calls: number; readonly downloads: number; readonly lookups: number } => {
  const total = Math.max(3, Math.floor(maxConnections))
  const downloads = Math.max(1, Math.floor(total / 3))
  return { calls: total - downloads - 1, downloads, lookups: 1 }
}

/** A Node http client on a keep-alive agent of its own, open for the scope. */
const nodeClient = (maxSockets: number) =>
  Effect.flatMap(
    // Idle pooled sockets are dropped after 4 s, before a Node server's default 5 s keep-alive
    // timeout closes them under a request (the classic ECONNRESET on a reused socket).
    NodeHttpClient.makeAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS, maxSockets }),
    (agent) => Effect.provideService(NodeHttpClient.makeNodeHttp, NodeHttpClient.HttpAgent, agent)
  )

/**
 * The WorkspaceClient over HTTP to `baseUrl` (the origin serving /workspace/...), on Node's
 * http client with three keep-alive agents for the Layer's lifetime: the calls', the downloads',
 * and one connection for the tenant lookup. Their connections together stay within `maxConnections`: past its per-client cap
 * (SVC_MAX_CONNECTIONS_PER_CLIENT, 256) the workspace service closes a connection as soon as it
 * is accepted: 800 task lists at once cost 860 refused calls, each retried after a backoff (p50
 * 762 ms; 491 ms and none refused with the cap).
 */
export const HttpWorkspaceClientLive = (
  baseUrl: string,
  options: HttpWorkspaceClientOptions
): Layer.Layer<WorkspaceClient> =>
  Layer.effect(
    WorkspaceClient,
    Effect.gen(function*() {
      const shares = connectionShares(options.maxConnections ?? DEFAULT_WORKSPACE_MAX_CONNECTIONS)
      const clients: WorkspaceClients = { downloads: yield* nodeClient(shares.downloads), lookups: yield* nodeClient(shares.lookups) }
      return yield* Effect.provideService(
        makeHttpWorkspaceClient(baseUrl, options, clients),
        HttpClient.HttpClient,
        yield* nodeClient(shares.calls)
      )
    })
  )
