/**
 * Who acts (README "Identity: who acts"): names the actor of a request from what the edge
 * says, and runs the request on their behalf (`withActor`, src/services/Actor.ts), so every
 * write it makes can record them. Off by default; the settings are src/config/IdentityConfig.ts.
 *
 * Scope: the tenant API (every path but the public ones below). /mcp names its agents by their
 * keys (`agent:<uuid>`, src/mcp/server.ts); /v1/health, the probes, the docs, the console's
 * static files and the GL connect page (a capability link) need no one.
 *
 * - JWT (SVC_JWT_JWKS): a request without a valid bearer token answers 401 with
 *   `WWW-Authenticate: Bearer` (`error="invalid_token"` when one was sent, RFC 6750); a token
 *   whose tenant claim is not this gateway's tenant answers 403; the keys are unavailable: 503.
 *   The actor is the token's claim. The actor header is then not read.
 * - Actor header (SVC_ACTOR_HEADER): its value is the actor; a malformed value answers 400
 *   naming the header; a write without it answers 401 unless SVC_ACTOR_REQUIRED=false (the
 *   header is the edge's statement of who authenticated: a write without one did not pass the
 *   edge as configured). Reads without it run unnamed.
 *
 * Runs before the body is read: a refused request costs no body.
 */
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { JWTPayload, JWTVerifyGetKey } from "jose"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { isLinkPath } from "../api/linkPath.js"
import { withActor, withIdentity } from "../services/Actor.js"
import { actorProblem, groupProblem, headerText, MAX_GROUPS } from "../services/actorValue.js"
import type { IdentitySettings, JwtSettings } from "../config/IdentityConfig.js"
import { RETRY_AFTER_SECONDS } from "../http/errors/errorResponse.js"
import { quoted } from "../lib/quoted.js"
import { KeysUnavailable, makeKeySet } from "./jwtKeys.js"
import { errorResponse } from "../http/errors/errorBody.js"
import { bearerCredential } from "../http/input/bearerCredential.js"

/** Paths open without naming anyone (exact), and open prefixes. */
const PUBLIC_PATHS = new Set(["/v1/health", "/mcp", "/readyz", "/metrics", "/docs", "/openapi.json", "/"])
const PUBLIC_PREFIXES = ["/console/", "/workspace/gl/connect/"]

/** Whether a request path needs the actor named (JWT: a token; header mode: read, and required on writes). */
export const identityApplies = (url: string): boolean => {
  const path = url.split("?", 1)[0]!
  if (PUBLIC_PATHS.has(path)) return false
  return !PUBLIC_PREFIXES.some((p) => path.startsWith(p) && !path.includes("/.."))
}

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"])

/**
 * Paths where the edge MAY name someone but need not: a decision link's page and its POST. The
 * link names its person; an edge that lets the route through without a login sends no one, and
 * an edge that logs people in names them, and then the link's handler requires the same person
 * (403 otherwise, src/workspace/server/linkRoutes.ts).
 */
const identityOptional = (url: string): boolean => isLinkPath(url)

/** Longest bearer token looked at (a JWT with a few claims is well under 2 KB). */
export const MAX_TOKEN_LENGTH = 8192
/** Seconds of clock difference allowed with the token issuer on exp and nbf. */
export const CLOCK_TOLERANCE_SECONDS = 30
/** Signature algorithms accepted: public-key ones only (a JWKS holds public keys; no HMAC, never "none"). */
const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"]

const REALM = "tenant-gateway"
const NO_STORE = { "cache-control": "no-store" }

const noStoreError = (statusCode: number, error: string, message: string, headers: Record<string, string> = {}) =>
  errorResponse(statusCode, error, message, { ...NO_STORE, ...headers })

const quote = (value: string) => quoted(value)

/** RFC 6750 b64token. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/

type Verdict =
  | { readonly _tag: "Actor"; readonly actor: string | undefined; readonly groups?: ReadonlyArray<string> | undefined }
  | { readonly _tag: "Refused"; readonly response: HttpServerResponse.HttpServerResponse }

const refused = (response: HttpServerResponse.HttpServerResponse): Verdict => ({ _tag: "Refused", response })

// ---------------------------------------------------------------------------------------------
// JWT

const missingToken = refused(noStoreError(401, "Unauthorized", "This API needs a bearer token: Authorization: Bearer <JWT>", {
  "www-authenticate": `Bearer realm="${REALM}"`
}))

/** 401 invalid_token; `why` is ours (never the client's text), so it fits in a quoted-string. */
const invalidToken = (why: string) =>
  refused(noStoreError(401, "Unauthorized", `Invalid bearer token: ${why}`, {
    "www-authenticate": `Bearer realm="${REALM}", error="invalid_token", error_description="${why.replace(/["\\]/g, "'")}"`
  }))

/** Why jose refused a token, in words (the claim names are jose's, the values never the client's). */
const tokenProblem = (e: unknown): string => {
  const error = e as { code?: unknown; claim?: unknown; reason?: unknown }
  switch (error.code) {
    case "ERR_JWT_EXPIRED":
      return "the token has expired"
    case "ERR_JWT_CLAIM_VALIDATION_FAILED": {
      const claim = typeof error.claim === "string" ? error.claim : "a claim"
      return error.reason === "missing" ? `the token has no "${claim}" claim` : `the token's "${claim}" claim is not accepted`
    }
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
      return "the signature does not verify"
    case "ERR_JOSE_ALG_NOT_ALLOWED":
    case "ERR_JOSE_NOT_SUPPORTED":
      return "the token's signature algorithm is not accepted"
    case "ERR_JWKS_NO_MATCHING_KEY":
      return "no key of the issuer matches the token"
    default:
      return "not a well-formed signed JWT"
  }
}

interface JwtVerifier {
  readonly verify: (authorization: string | undefined) => Promise<Verdict>
}

const makeJwtVerifier = async (
  settings: JwtSettings,
  tenantSlug: Option.Option<string>,
  onWarning: (message: string) => void
): Promise<JwtVerifier> => {
  const jose = await import("jose")
  const keys = await makeKeySet(settings.jwks, { fetchTimeoutMs: settings.fetchTimeoutMs, cooldownMs: settings.cooldownMs, onWarning })
  const options = {
    issuer: settings.issuer,
    audience: [...settings.audience],
    algorithms: ALGORITHMS,
    requiredClaims: ["exp"],
    clockTolerance: CLOCK_TOLERANCE_SECONDS
  }

  /** A key set holding several keys the token could name: try each (jose leaves that to its caller). */
  const verifyWith = async (token: string, getKey: JWTVerifyGetKey): Promise<JWTPayload> => {
    try {
      return (await jose.jwtVerify(token, getKey, options)).payload
    } catch (e) {
      if ((e as { code?: unknown }).code !== "ERR_JWKS_MULTIPLE_MATCHING_KEYS") throw e
      let last: unknown = e
      for await (const key of e as AsyncIterable<Parameters<typeof jose.jwtVerify>[1] & object>) {
        try {
          return (await jose.jwtVerify(token, key, options)).payload
        } catch (inner) {
          last = inner
        }
      }
      throw last
    }
  }

  const claimedActor = (payload: JWTPayload): Verdict => {
    // How long the token was minted for (SVC_JWT_MAX_AGE): exp - iat, or exp - now without iat.
    const now = Math.floor(Date.now() / 1000)
    if (typeof payload.iat === "number" && payload.iat > now + CLOCK_TOLERANCE_SECONDS) {
      return invalidToken("the token's \"iat\" claim lies in the future")
    }
    const lifetime = (payload.exp ?? now) - (typeof payload.iat === "number" ? payload.iat : now)
    if (lifetime > settings.maxAgeSeconds + CLOCK_TOLERANCE_SECONDS) {
      return invalidToken(`the token is valid for ${lifetime} s (exp - iat), longer than the ${settings.maxAgeSeconds} s accepted (SVC_JWT_MAX_AGE)`)
    }
    const value = payload[settings.actorClaim]
    if (typeof value !== "string") {
      return invalidToken(value === undefined ? `the token has no "${settings.actorClaim}" claim` : `the token's "${settings.actorClaim}" claim is not a string`)
    }
    const problem = actorProblem(value)
    if (problem !== undefined) return invalidToken(`the token's "${settings.actorClaim}" claim ${problem.replace(/"/g, "'")}`)
    if (settings.tenantClaim !== undefined) {
      const tenant = payload[settings.tenantClaim]
      if (typeof tenant !== "string" || !Option.contains(tenantSlug, tenant)) {
        const named = typeof tenant === "string" ? ` ${quote(tenant)}` : ""
        return refused(noStoreError(403, "Forbidden", tenant === undefined
          ? `The token names no tenant (claim "${settings.tenantClaim}"): this gateway serves one tenant`
          : `The token's tenant${named} (claim "${settings.tenantClaim}") is not the tenant this gateway serves`))
      }
    }
    let groups: ReadonlyArray<string> = []
    if (settings.groupsClaim !== undefined) {
      const claim = payload[settings.groupsClaim]
      const list = claim === undefined
        ? []
        : typeof claim === "string"
        ? splitGroups(claim)
        : Array.isArray(claim) && claim.every((g) => typeof g === "string")
        ? claim as Array<string>
        : undefined
      const problem = list === undefined ? "is not a list of strings" : groupsProblem(list)
      if (problem !== undefined) return invalidToken(`the token's "${settings.groupsClaim}" claim ${problem.replace(/"/g, "'")}`)
      groups = list!
    }
    return { _tag: "Actor", actor: value, groups }
  }

  return {
    verify: async (authorization) => {
      if (authorization === undefined) return missingToken
      const token = bearerCredential(authorization)
      if (token === undefined) return missingToken // another scheme: no bearer credential was sent
      if (token.length === 0 || token.length > MAX_TOKEN_LENGTH || !B64TOKEN.test(token)) {
        return invalidToken(token.length > MAX_TOKEN_LENGTH ? `the token is longer than ${MAX_TOKEN_LENGTH} characters` : "not a well-formed signed JWT")
      }
      try {
        return claimedActor(await verifyWith(token, keys))
      } catch (e) {
        if (e instanceof KeysUnavailable) {
          return refused(noStoreError(503, "Service Unavailable", "The keys that verify bearer tokens are unavailable; retry shortly", {
            "retry-after": RETRY_AFTER_SECONDS
          }))
        }
        return invalidToken(tokenProblem(e))
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Actor header

/** A comma list of groups, trimmed, empty entries dropped. */
const splitGroups = (text: string) => text.split(",").map((g) => g.trim()).filter((g) => g !== "")

/** Why a list of groups is refused, or undefined. */
const groupsProblem = (groups: ReadonlyArray<string>): string | undefined => {
  if (groups.length > MAX_GROUPS) return `names ${groups.length} groups; at most ${MAX_GROUPS} are read`
  for (const g of groups) {
    const problem = groupProblem(g)
    if (problem !== undefined) return `holds a group that ${problem}`
  }
  return undefined
}

/** How many times the request carries header `name` (Node joins repeats into one value). */
const timesSent = (request: HttpServerRequest.HttpServerRequest, name: string): number => {
  const raw = NodeHttpServerRequest.toIncomingMessage(request).rawHeaders
  let n = 0
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) n++
  return n
}

const headerVerdict = (name: string, required: boolean, method: string, raw: string | undefined): Verdict => {
  if (raw === undefined || raw === "") {
    if (required && WRITE_METHODS.has(method)) {
      return refused(noStoreError(401, "Unauthorized", `This write names no actor: the authenticating proxy in front of the gateway sets header ${name}`))
    }
    return { _tag: "Actor", actor: undefined }
  }
  const text = headerText(raw)
  // A comma is how a proxy that appends joins a client's copy of the header to its own: two
  // people in one value would count as a third for four-eyes. Edges name one actor, without one.
  const problem = text === undefined
    ? "is not UTF-8 text"
    : text.includes(",")
    ? "holds a comma: a proxy joins two copies of the header so (the client's and its own), and the edge names one actor"
    : actorProblem(text)
  if (problem !== undefined) return refused(noStoreError(400, "Bad Request", `Header ${name}: the actor ${problem}`))
  return { _tag: "Actor", actor: text }
}

// ---------------------------------------------------------------------------------------------

/**
 * The identity middleware for `settings` (identity when both ways are off). Builds the JWT key
 * set now (a JWKS file is read: a missing or malformed one fails, naming SVC_JWT_JWKS).
 */
export const identityMiddleware = (settings: IdentitySettings, tenantSlug: Option.Option<string>) =>
  Effect.gen(function*() {
    const { header, jwt } = settings
    if (header === undefined && jwt === undefined) {
      return <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) => app
    }
    // Warnings from the key set's background reloads, logged with the process's logger.
    const runFork = Effect.runForkWith(yield* Effect.context<never>())
    const onWarning = (message: string) => void runFork(Effect.logWarning(message))
    const verifier = jwt === undefined
      ? undefined
      : yield* Effect.tryPromise({ try: () => makeJwtVerifier(jwt, tenantSlug, onWarning), catch: (e) => e as Error })

    const groupsHeader = settings.groupsHeader
    /** How this edge names a person, for answers to a request that names nobody. */
    const namedBy = jwt !== undefined ? `the bearer token's ${jwt.actorClaim} claim` : `header ${header!.name}`
    /** Header mode: the actor, and the groups when SVC_GROUPS_HEADER names them; a repeated header is refused. */
    const fromHeaders = (request: HttpServerRequest.HttpServerRequest, optional: boolean): Verdict => {
      for (const name of [header!.name, ...(groupsHeader !== undefined ? [groupsHeader] : [])]) {
        // Two copies (a client's and the edge's, joined by Node) could name two people: refused.
        if (timesSent(request, name) > 1) return refused(noStoreError(400, "Bad Request", `Header ${name} is sent more than once: the edge sets it once`))
      }
      const v = headerVerdict(header!.name, header!.required && !optional, request.method, request.headers[header!.name])
      if (v._tag === "Refused" || groupsHeader === undefined) return v
      // Groups come with the person the edge names: without one they are nobody's, so they are
      // not read (a claim or a decision needs an actor, and `assignee=me` and /v1/me would
      // otherwise match steps for no one). On a link's route the edge left open the groups header
      // is moreover the client's own, and would vouch for the link's person.
      if (v.actor === undefined) return v
      const raw = request.headers[groupsHeader]
      if (raw === undefined || raw === "") return v
      const text = headerText(raw)
      const groups = text === undefined ? undefined : splitGroups(text)
      const problem = groups === undefined ? "is not UTF-8 text" : groupsProblem(groups)
      if (problem !== undefined) return refused(noStoreError(400, "Bad Request", `Header ${groupsHeader}: ${problem}`))
      return { ...v, groups: groups! }
    }

    const verdict = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<Verdict> => {
      // A decision link's route: the edge may name someone, need not (the link names its person).
      const optional = identityOptional(request.url)
      if (verifier !== undefined) {
        const authorization = request.headers["authorization"]
        return optional && authorization === undefined
          ? Effect.succeed({ _tag: "Actor", actor: undefined })
          : Effect.promise(() => verifier.verify(authorization))
      }
      return Effect.sync(() => fromHeaders(request, optional))
    }

    return <E, R>(
      app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        if (!identityApplies(request.url)) return app
        // An identity is configured: step assignment holds (src/domain/assignment.ts).
        return Effect.flatMap(verdict(request), (v) =>
          v._tag === "Refused"
            ? Effect.succeed(v.response)
            : withIdentity({ groups: v.groups ?? [], enforced: true, namedBy })(withActor(v.actor)(app)))
      })
  })
