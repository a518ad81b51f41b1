/**
 * The agent tool server: MCP (Streamable HTTP transport, stateless: JSON responses, no SSE
 * stream, no session) at POST /mcp on the gateway's port, on the official MCP TypeScript SDK.
 *
 * Every request, whatever its method, is authenticated first (./auth.ts): without a valid API
 * key of an agent of this tenant it is answered 401 with `WWW-Authenticate: Bearer` and no MCP
 * message is looked at. Failures are counted per client address (src/http/server/clientAddress.ts) and per
 * presented key (its hash), see `guard` below: a valid key is never refused because of other
 * callers' failures. Then each POST gets its own SDK server and
 * transport (stateless mode), whose tool handlers know the calling agent and run the tools
 * (./tools.ts) on this request's fiber context (its deadline, its log annotations).
 *
 * The JSON body has already passed the gateway's one input check (src/http/input/jsonInput.ts); it
 * is handed to the transport parsed, unless it is a batch over SVC_MCP_MAX_BATCH (or empty). The request the SDK sees carries no Authorization header:
 * the key goes no further than ./auth.ts.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { withActor } from "../services/Actor.js"
import { yieldToEventLoop } from "../lib/eventLoop.js"
import { hashApiKey } from "../domain/apiKeys.js"
import { type AuthFailure, type Authenticated, authenticate, bearerToken } from "./auth.js"
import { addressBucket, clientAddress } from "../http/server/clientAddress.js"
import { MCP_PATH, McpConfig } from "./McpConfig.js"
import { makeFailureLimiter } from "./limiter.js"
import { callTool, listing, type ToolContext, type ToolServices } from "./toolkit.js"
import { agentSource } from "./AgentTimeline.js"
import { TOOLS } from "./tools.js"
import { errorResponse } from "../http/errors/errorBody.js"
import { API_VERSION } from "../api/version.js"

export const SERVER_INFO = { name: "tenant-gateway", version: API_VERSION } as const

const INSTRUCTIONS = "Tools of one tenant's workspace. Your work: list_assigned_steps (the current steps assigned to " +
  "you), or list_entities → list_tasks. Read a task with get_task (its current step, the action it expects, and who it " +
  "is assigned to), its files with list_files / read_file, its timeline with list_events. Stream your reasoning with " +
  "append_event (type reasoning.delta, one groupKey per thread). Complete a step: decide_step (approve / reject), " +
  "submit_file or write_output_files with the signal of the step's submit_file action. Everything you write is " +
  "recorded in the task's timeline under your name. Errors carry the gateway's message."

/** Hop-by-hop and body framing headers, and the credential: none of them reach the SDK. */
const DROPPED = new Set(["authorization", "connection", "content-length", "host", "keep-alive", "transfer-encoding", "upgrade"])

const unauthorized = (failure: AuthFailure) =>
  failure._tag === "Missing"
    ? errorResponse(401, "Unauthorized", "Missing agent API key: send Authorization: Bearer <agent API key>", {
      "www-authenticate": "Bearer realm=\"mcp\""
    })
    : errorResponse(401, "Unauthorized", "Invalid agent API key", {
      "www-authenticate": "Bearer realm=\"mcp\", error=\"invalid_token\", error_description=\"Invalid agent API key\""
    })

const tooManyFailures = (from: "from this address" | "with this key", waitMs: number) => {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000))
  return errorResponse(
    429,
    "Too Many Requests",
    `Too many failed authentications ${from}; retry in ${seconds} s`,
    { "retry-after": String(seconds) }
  )
}

const methodNotAllowed = (method: string) =>
  errorResponse(
    405,
    "Method Not Allowed",
    `Method ${method} is not allowed on ${MCP_PATH}; allowed: POST (stateless server: no SSE stream, no sessions)`,
    { allow: "POST" }
  )

/**
 * A batch the transport is not given: more messages than `max`, or none. Answered as the SDK's
 * transport answers a batch over its own cap (400, a JSON-RPC Invalid Request with id null), the
 * shape an MCP client reads on this path.
 */
const badBatch = (size: number, max: number) =>
  HttpServerResponse.jsonUnsafe({
    jsonrpc: "2.0",
    id: null,
    error: {
      code: ErrorCode.InvalidRequest,
      message: size === 0
        ? "Invalid Request: an empty batch"
        : `Invalid Request: a batch may hold at most ${max} messages (SVC_MCP_MAX_BATCH); this one holds ${size}`
    }
  }, { status: 400 })

const isAuthFailure = (u: unknown): u is AuthFailure =>
  typeof u === "object" && u !== null && ((u as AuthFailure)._tag === "Missing" || (u as AuthFailure)._tag === "Invalid")

const byName = new Map(TOOLS.map((t) => [t.name, t]))

/** One SDK server for one request: the tools, run for `context` with `services` (this request's context). */
const makeServer = (
  listings: ReturnType<typeof listing>[],
  context: ToolContext,
  services: Context.Context<ToolServices>
) => {
  const run = Effect.runPromiseWith(services)
  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listings }))
  // The transport hands over every call of a batch at once. Run them one after another, each
  // after a turn of the event loop: started together, their synchronous steps (SQLite reads,
  // JSON) would run back to back on microtasks and other requests (health) would wait for all.
  let queue: Promise<unknown> = Promise.resolve()
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const t = byName.get(request.params.name)
    if (t === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`)
    const turn = queue.then(() =>
      run(Effect.andThen(yieldToEventLoop, callTool(t, request.params.arguments, context)), { signal: extra.signal })
    )
    queue = turn.catch(() => undefined)
    return turn
  })
  return server
}

/** The MCP exchange of one authenticated POST, over the SDK's web-standard transport. */
const serveMcp = (
  webRequest: Request,
  body: unknown,
  auth: Authenticated,
  server: Server
): Promise<Response> => {
  // No sessionIdGenerator: stateless mode.
  const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true })
  return server.connect(transport).then(() =>
    transport.handleRequest(webRequest, {
      parsedBody: body,
      // What the SDK passes to handlers: the agent, never the key.
      authInfo: { token: "", clientId: auth.agent.id, scopes: [], extra: { agentId: auth.agent.id, tenantId: auth.tenant.id } }
    }).finally(() => server.close())
  )
}

/**
 * The /mcp handler with its state (the failure limiter, the tool listings), made once on the
 * first request (./route.ts mounts it and loads this module then).
 */
export const makeMcpHandler = (
  /**
   * The tools' services as the route was built with them, not the context of the request that
   * makes this handler: that request's own entries (its deadline, idempotency key, identity, its
   * id and arrival) are not services of the process, and would stand in for every later
   * request's: once the first request's deadline had passed, every later /mcp request to a
   * workspace service answered 504.
   */
  services: Context.Context<ToolServices>
) => Effect.gen(function*() {
  const config = Context.get(services, McpConfig)
  const limits = { burst: config.authFailureBurst, refillMs: config.authFailureRefillMs }
  const byAddress = makeFailureLimiter(limits)
  const byKey = makeFailureLimiter(limits)
  const proxy = { header: config.clientAddressHeader, hops: config.trustedProxyHops }
  // A tool whose schema is not an object schema fails here (test/mcp checks every listing).
  const listings = TOOLS.map(listing)

  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const address = addressBucket(clientAddress(Option.getOrUndefined(request.remoteAddress), request.headers, proxy))
    const keyId = Option.getOrUndefined(Option.map(bearerToken(request.headers.authorization), hashApiKey))

    // A key that keeps failing is refused before it is looked up again. Only failures with that
    // very key count, and a valid key never fails, so this never refuses a valid key.
    const keyWait = keyId === undefined ? 0 : byKey.retryAfterMs(keyId)
    if (keyWait > 0) return tooManyFailures("with this key", keyWait)
    // A limited address still gets its keys looked up: a valid key works whatever others sent
    // from the same address (one proxy, one NAT), and a bad one is answered 429. Guessing gains
    // nothing from the lookup: keys are 256 random bits (src/workspace/embedded/agents.ts); the
    // limit keeps a bad caller's noise down and tells a misconfigured agent to back off.
    const addressWait = byAddress.retryAfterMs(address)
    if (addressWait > 0 && keyId === undefined) return tooManyFailures("from this address", addressWait)

    const authResult = yield* Effect.result(Effect.provide(authenticate(request.headers.authorization), services))
    if (Result.isFailure(authResult)) {
      const failure = authResult.failure
      if (!isAuthFailure(failure)) return yield* Effect.fail(failure)
      byAddress.recordFailure(address)
      if (keyId !== undefined) byKey.recordFailure(keyId)
      return addressWait > 0 ? tooManyFailures("from this address", addressWait) : unauthorized(failure)
    }
    const auth = authResult.success
    if (request.method !== "POST") return methodNotAllowed(request.method)

    const body = yield* Effect.orDie(request.json)
    if (Array.isArray(body) && (body.length === 0 || body.length > config.maxBatch)) return badBatch(body.length, config.maxBatch)
    const url = Option.getOrElse(HttpServerRequest.toURL(request), () => new URL(request.url, "http://localhost"))
    const headers = new Headers()
    for (const [name, value] of Object.entries(request.headers)) if (!DROPPED.has(name)) headers.set(name, value)
    const webRequest = new Request(url, { method: "POST", headers })

    // This request's references (deadline, log annotations, the agent as the actor: every write
    // a tool makes records `agent:<uuid>`) with the tools' services.
    const toolServices = yield* Effect.provide(Effect.context<ToolServices>(), services).pipe(
      withActor(agentSource(auth.agent))
    )
    const server = makeServer(listings, { agent: auth.agent, tenant: auth.tenant, origin: url.origin }, toolServices)
    const app = HttpEffect.fromWebHandler((req) => serveMcp(req, body, auth, server))
    return yield* Effect.provideService(app, HttpServerRequest.HttpServerRequest, HttpServerRequest.fromWeb(webRequest)).pipe(
      Effect.orDie
    )
  })
})
