/**
 * Unknown query parameters are refused like unknown body keys: a request (the gateway's /v1, the
 * workspace API's /workspace) whose query names a parameter its endpoint does not declare answers 400 naming it, in the message
 * form of an unknown body key (`x: is unexpected, expected: "a" | "b"`). Silently ignoring them
 * hid typos (`?lmit=10` answered everything) and made cache busters look supported.
 *
 * The declared names come from the contract (each endpoint's `query` schema), so a parameter
 * added there is accepted here with no second list. Requests this check cannot place (no
 * endpoint of the API has the path with this method) go on to the router's own 404/405.
 */
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Effect from "effect/Effect"
import * as SchemaAST from "effect/SchemaAST"
import { BadRequest } from "../../api/errors.js"
import { matchPath } from "../errors/unrouted.js"
import { quoted } from "../../lib/quoted.js"

/**
 * The part of an HttpApi read here, structurally: Effect 4's `HttpApi.Top` is not a supertype of a
 * concrete API (see ApiRoutes in ../errors/unrouted.ts).
 */
export interface QueryRoutes {
  readonly groups: {
    readonly [group: string]: {
      readonly endpoints: {
        readonly [endpoint: string]: {
          readonly method: string
          readonly path: string
          readonly query?: { readonly ast: SchemaAST.AST } | undefined
        }
      }
    }
  }
}

/** Each endpoint's query fields as the wire has them (the encoded side of its `query` schema). */
const queryFields = (api: QueryRoutes): ReadonlyMap<string, ReadonlyArray<SchemaAST.PropertySignature>> => {
  const out = new Map<string, ReadonlyArray<SchemaAST.PropertySignature>>()
  for (const group of Object.values(api.groups)) {
    for (const endpoint of Object.values(group.endpoints)) {
      const encoded = endpoint.query === undefined ? undefined : SchemaAST.toEncoded(endpoint.query.ast)
      out.set(`${endpoint.method} ${endpoint.path}`, encoded !== undefined && SchemaAST.isObjects(encoded) ? encoded.propertySignatures : [])
    }
  }
  return out
}

/** `METHOD path-template` → the query parameter names the endpoint declares. */
export const declaredQueryParams = (api: QueryRoutes): ReadonlyMap<string, ReadonlySet<string>> =>
  new Map([...queryFields(api)].map(([key, fields]) => [key, new Set(fields.map((p) => String(p.name)))]))

/** `METHOD path-template` → the declared names that take several values (an array in the contract). */
const repeatableQueryParams = (api: QueryRoutes): ReadonlyMap<string, ReadonlySet<string>> => {
  const isArray = (ast: SchemaAST.AST): boolean =>
    SchemaAST.isArrays(ast) || (SchemaAST.isUnion(ast) && ast.types.some(isArray))
  return new Map(
    [...queryFields(api)].map(([key, fields]) => [key, new Set(fields.filter((p) => isArray(p.type)).map((p) => String(p.name)))])
  )
}

const quotedNames = (names: Iterable<string>) => [...names].map((n) => JSON.stringify(n)).join(" | ")

/** The 400 for `key`, when the endpoint takes `allowed`. */
export const unexpectedQueryParam = (key: string, allowed: ReadonlySet<string>) => {
  // Shown as sent, but on one line and bounded; an empty name as "".
  const shown = key === "" ? `""` : key.length > 64 || /[\s"\\]|[^\x20-\x7e]/.test(key) ? quoted(key) : key
  return new BadRequest({
    message: allowed.size === 0
      ? `${shown}: is unexpected: this endpoint takes no query parameters`
      : `${shown}: is unexpected, expected: ${quotedNames(allowed)}`
  })
}

/** The 400 for a one-value parameter given `count` times (the decoder's "Expected string, actual [...]" read as a bad value). */
export const repeatedQueryParam = (key: string, count: number) =>
  new BadRequest({ message: `${key}: is given ${count} times, expected once` })

/**
 * Middleware: the first query parameter of a /v1 request that its endpoint does not declare is a
 * 400; so is a declared one-value parameter given more than once.
 */
export const refuseUnknownQueryParams = (api: QueryRoutes) => {
  const declared = declaredQueryParams(api)
  const repeatable = repeatableQueryParams(api)
  return <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E | BadRequest, R | HttpServerRequest.HttpServerRequest> =>
    Effect.flatMap(
      HttpServerRequest.HttpServerRequest,
      (request): Effect.Effect<HttpServerResponse.HttpServerResponse, E | BadRequest, R> => {
        const at = request.url.indexOf("?")
        if (at === -1) return app
        const method = request.method === "HEAD" ? "GET" : request.method
        const matches = matchPath(api, request.url).filter((m) => m.method === method)
        if (matches.length === 0) return app
        const allowed = new Set(matches.flatMap((m) => [...(declared.get(`${m.method} ${m.path}`) ?? [])]))
        const many = new Set(matches.flatMap((m) => [...(repeatable.get(`${m.method} ${m.path}`) ?? [])]))
        const seen = new Map<string, number>()
        for (const key of new URLSearchParams(request.url.slice(at + 1)).keys()) {
          if (!allowed.has(key)) return Effect.fail(unexpectedQueryParam(key, allowed))
          seen.set(key, (seen.get(key) ?? 0) + 1)
        }
        for (const [key, count] of seen) {
          if (count > 1 && !many.has(key)) return Effect.fail(repeatedQueryParam(key, count))
        }
        return app
      }
    )
}
