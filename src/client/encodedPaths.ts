/**
 * Wraps a client made by HttpApiClient so that every method sends its path parameters as one
 * segment each (./pathParams.ts): whatever a caller passes as an id, the request goes to the
 * route the method names, never to another resource. Effect 4's HttpApiClient percent-encodes
 * each parameter itself (encodeURIComponent), so the values pass through as they are; what it
 * does not do is refuse `.` and `..` as a failure: it throws (a defect). They are refused here.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { dotSegmentParam } from "./pathParams.js"

type Method = (request?: unknown) => Effect.Effect<unknown, unknown, unknown>

const encoded = (method: Method): Method => (request) => {
  const path = (request as { path?: unknown } | null | undefined)?.path
  if (typeof path !== "object" || path === null) return method(request)
  const params = path as Record<string, string>
  const dot = dotSegmentParam(params)
  if (dot !== undefined) {
    // Refused here as the contract's own checks refuse a value: before anything is sent.
    return Effect.fail(
      new Schema.SchemaError(
        new SchemaIssue.InvalidValue({ message: `${dot}: cannot be "${params[dot]}" (a URL drops that segment)` }, params[dot])
      )
    )
  }
  return method(request)
}

/** The same client, every endpoint method (in groups and at the top level) checking its path. */
export const withEncodedPaths = <C>(client: C): C => {
  const wrap = (value: unknown, depth: number): unknown => {
    if (typeof value === "function") return encoded(value as Method)
    if (depth <= 1 && typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, wrap(v, depth + 1)]))
    }
    return value
  }
  return wrap(client, 0) as C
}
