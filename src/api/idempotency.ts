/**
 * The `Idempotency-Key` request header, as both APIs publish it. On the gateway every write
 * (POST, PATCH, DELETE under /v1) takes it; the middleware reads it (src/gateway/requestScope.ts)
 * rather than each endpoint's headers schema, because a headers schema makes `headers` a
 * required argument of every derived client method (HttpApiClient encodes it even when each
 * field is optional), which would break every existing caller. The header is declared in the
 * document by `declareIdempotencyKey` instead. WorkspaceApi, whose only client is ours,
 * declares it with `setHeaders` (`IdempotencyKeyHeaders`).
 */
import * as Schema from "effect/Schema"
import { optional } from "./optional.js"

/** The header's name, lower case as Node hands it over. */
export const IDEMPOTENCY_KEY_HEADER = "idempotency-key"
/** Longest accepted key (Stripe's bound); UUIDs are the usual choice. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255

const KEY_PATTERN = /^[\x21-\x7e]+$/

/** Why `key` cannot be an idempotency key, or undefined when it can (1-255 visible ASCII characters). */
export const idempotencyKeyProblem = (key: string): string | undefined =>
  key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH || !KEY_PATTERN.test(key)
    ? `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters (a UUID, say)`
    : undefined

export const IDEMPOTENCY_KEY_DESCRIPTION = "Makes the write safe to retry: the first request with a key is carried out and its " +
  "result stored (24 hours); a retry with the same key and the same request returns that result and writes nothing " +
  "again; the same key with a different request is a 409 (Stripe's semantics). 1 to 255 visible ASCII characters, a " +
  "UUID say (400 otherwise). Without it, the gateway uses a key of its own for the request, so its own retries of " +
  "the upstream write are safe."

/**
 * The header as a headers schema field. Only its presence is declared (any non-empty text):
 * Node strips surrounding blanks before the server sees a value, so a pattern or a length
 * bound would be checked on something else than what was sent; the server checks the rules
 * above and answers 400.
 */
export const IdempotencyKeyHeaders = Schema.Struct({
  [IDEMPOTENCY_KEY_HEADER]: optional(Schema.String.check(Schema.isMinLength(1)).annotate({
    description: IDEMPOTENCY_KEY_DESCRIPTION
  }))
})

const WRITE_METHODS = new Set(["post", "put", "patch", "delete"])

/**
 * OpenAPI transform: every write operation of the document takes the optional
 * `Idempotency-Key` header and may answer 409 (the key reused with a different request).
 */
export const declareIdempotencyKey = (spec: Record<string, any>): Record<string, any> => {
  for (const path of Object.values(spec.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(path)) {
      if (!WRITE_METHODS.has(method)) continue
      op.parameters ??= []
      if (!op.parameters.some((p: any) => p.in === "header" && String(p.name).toLowerCase() === IDEMPOTENCY_KEY_HEADER)) {
        op.parameters.push({
          name: "Idempotency-Key",
          in: "header",
          required: false,
          description: IDEMPOTENCY_KEY_DESCRIPTION,
          schema: { type: "string", minLength: 1 }
        })
      }
    }
  }
  return spec
}
