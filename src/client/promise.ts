/**
 * A Promise-shaped view of an HttpApiClient for callers that do not use Effect: every endpoint
 * method returns a Promise of its success value and rejects with the same typed error values
 * (NotFound, BadRequest, ... from the contract; HttpClientError for transport trouble;
 * Schema.SchemaError for an unexpected response body).
 */
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

type AnyMethod = (...args: ReadonlyArray<any>) => Effect.Effect<any, any, never>

/** A method's success without the `withResponse: true` variant (the wrapper never returns the response). */
type SuccessOf<F> = F extends (...args: ReadonlyArray<any>) => Effect.Effect<infer A, infer _E, infer _R>
  ? Exclude<A, readonly [unknown, HttpClientResponse.HttpClientResponse]>
  : never

export type PromiseClient<C> = {
  readonly [K in keyof C]: C[K] extends AnyMethod ? (request: Omit<Exclude<Parameters<C[K]>[0], void>, "withResponse"> | (void extends Parameters<C[K]>[0] ? void : never)) => Promise<SuccessOf<C[K]>>
    : C[K] extends Record<string, AnyMethod> ? PromiseClient<C[K]>
    : never
}

/** Runs the effect; resolves with its value or rejects with its failure as it is (not a FiberFailure). */
export const runToPromise = <A, E>(effect: Effect.Effect<A, E, never>): Promise<A> =>
  Effect.runPromiseExit(effect).then((exit) => {
    if (Exit.isSuccess(exit)) return exit.value
    throw Cause.squash(exit.cause)
  })

/** Wraps every method of an HttpApiClient (groups nested one level, top-level methods too). */
export const toPromiseClient = <C extends Record<string, unknown>>(client: C): PromiseClient<C> => {
  const wrap = (value: unknown): unknown => {
    if (typeof value === "function") {
      return (request?: Record<string, unknown>) => {
        // The Promise view always answers the decoded value.
        const plain = request !== undefined && request !== null && "withResponse" in request
          ? Object.fromEntries(Object.entries(request).filter(([k]) => k !== "withResponse"))
          : request
        return runToPromise((value as AnyMethod)(plain))
      }
    }
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, wrap(v)]))
    }
    return value
  }
  return wrap(client) as PromiseClient<C>
}
