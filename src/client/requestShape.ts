/**
 * The typed client's request shape, as the README shows it and every client of ours (the
 * console, `svc`) calls it: `{ path, urlParams, payload, headers, withResponse }`. Effect 4's
 * HttpApiClient names these `params`, `query` and `responseMode`; this maps one onto the other,
 * in the types and at run time, so the client's public API stays as it was.
 */
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import type * as Effect from "effect/Effect"

type AnyMethod = (request?: any) => Effect.Effect<any, any, any>

/** A decoded success, without the variants of the other response modes. */
type Decoded<A> = Exclude<A, HttpClientResponse.HttpClientResponse | readonly [unknown, HttpClientResponse.HttpClientResponse]>

type Renamed<O> = {
  readonly [K in keyof O as K extends "params" ? "path" : K extends "query" ? "urlParams" : K]: O[K]
}

type Fields<Req> = Omit<Exclude<Req, void | undefined>, "responseMode" | "sseOptions">

/** A method's request in the client's shape: `withResponse: true` answers `[value, response]`. */
export type RequestOf<Req, W extends boolean> = keyof Fields<Req> extends never
  ? void | { readonly withResponse?: W }
  : Renamed<Fields<Req>> & { readonly withResponse?: W }

export type ShapedMethod<M> = M extends (request: infer Req) => Effect.Effect<infer A, infer E, infer R>
  ? <W extends boolean = false>(
    request: RequestOf<Req, W>
  ) => Effect.Effect<W extends true ? [Decoded<A>, HttpClientResponse.HttpClientResponse] : Decoded<A>, E, R>
  : never

/** Every method of a client (in groups and at the top level) in the client's request shape. */
export type Shaped<C> = {
  readonly [K in keyof C]: C[K] extends AnyMethod ? ShapedMethod<C[K]> : Shaped<C[K]>
}

/** The request as HttpApiClient takes it. */
export const toEffectRequest = (request: unknown): unknown => {
  if (typeof request !== "object" || request === null) return request
  const { path, urlParams, withResponse, ...rest } = request as Record<string, unknown>
  return {
    ...rest,
    ...(path !== undefined ? { params: path } : {}),
    ...(urlParams !== undefined ? { query: urlParams } : {}),
    ...(withResponse === true ? { responseMode: "decoded-and-response" } : {})
  }
}

/** The same client, every endpoint method taking the client's request shape. */
export const withRequestShape = <C>(client: C): Shaped<C> => {
  const wrap = (value: unknown, depth: number): unknown => {
    if (typeof value === "function") {
      const method = value as (request?: unknown) => unknown
      return (request?: unknown) => method(toEffectRequest(request))
    }
    if (depth <= 1 && typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, wrap(v, depth + 1)]))
    }
    return value
  }
  return wrap(client, 0) as Shaped<C>
}
