/**
 * Idempotent writes of the embedded workspace (../workspace/embedded/store.ts): what identifies
 * a request (its fingerprint) and the answer to a key reused for another one.
 *
 * A key names one request: the first write with it stores its result under the key, in the
 * write's own transaction; the same key with the same request returns that result and writes
 * nothing; the same key with a different operation or different arguments is a 409 (Stripe's
 * semantics). Failed writes store nothing, so a retry after a failure runs again.
 */
import * as Effect from "effect/Effect"
import { canonicalJsonValue } from "../lib/sameJson.js"
import { Conflict } from "../api/errors.js"
import { actorKey } from "./actorSkeleton.js"
import { parseJson } from "../api/jsonParse.js"

/** How long a key and its result are kept: a retry later than this runs again. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000

const encoder = new TextEncoder()

/** SHA-256 (hex) off the event loop: Web Crypto digests on libuv's thread pool (8 MB: ~20 ms not spent blocking). */
const sha256Hex = (data: string | Uint8Array): Effect.Effect<string> =>
  Effect.map(
    Effect.promise(() => crypto.subtle.digest("SHA-256", typeof data === "string" ? encoder.encode(data) : data)),
    (digest) => Buffer.from(digest).toString("hex")
  )

/**
 * The fingerprint of one write: its operation and arguments as JSON (SHA-256, hex; bytes stand
 * in by their own digest). Plain JSON.stringify, key order included: a retry sends the same
 * body, and sorting keys would cost a 5,000-row batch ~4x the time on the event loop.
 */
export const fingerprintOf = (operation: string, args: unknown): Effect.Effect<string> =>
  Effect.suspend(() => sha256Hex(`${operation}\u0000${JSON.stringify(args) ?? "null"}`))

/*
 * A key is its caller's: the stored fingerprint is the request's (hex, never a space) followed by
 * who sent it, ` actor:<actorKey>` for a person the edge names, ` anonymous` for a request that
 * names nobody (SVC_ACTOR_REQUIRED=false). Anonymous is a caller of its own: a key first sent with
 * no actor and then by a named person (or the other way round) is another request, a 409, not the
 * first one's result. No NUL in the marks: PostgreSQL text cannot hold one.
 */
const ACTOR_MARK = " actor:"
const ANONYMOUS_MARK = " anonymous"

/** The fingerprint stored for a keyed write: the request's own (`bare`) and its caller. */
export const callerFingerprint = (bare: string, actor: string | undefined): string =>
  actor === undefined ? `${bare}${ANONYMOUS_MARK}` : `${bare}${ACTOR_MARK}${actorKey(actor)}`

/**
 * Whether a stored fingerprint is this request from this caller. A bare one (no caller mark) was
 * stored before keys carried their caller, and nothing stores one now: it matches whoever repeats
 * the request, for the 24 hours it is kept. (Anonymous keys were stored bare too until they got
 * their own mark, so those of the last 24 hours before it still match a named caller; from then
 * on they do not.)
 */
export const sameRequest = (stored: string, bare: string, actor: string | undefined): boolean =>
  stored === callerFingerprint(bare, actor) || stored === bare

const shown = (key: string) => (key.length > 64 ? `${key.slice(0, 64)}…` : key)

export const keyReused = (key: string) =>
  new Conflict({
    message: `Idempotency-Key "${shown(key)}" was already used for a different request: a key stands for one ` +
      "request, and a retry must repeat it exactly (same operation, same body); the same key with a different " +
      "request is refused (Stripe's semantics). Use a new key for a new request."
  })

/** A stored result, as text, and back (`undefined`, a void result, is stored as null). */
export const encodeResult = (result: unknown): string | null => (result === undefined ? null : JSON.stringify(result))
/** A stored result as first answered: keys written with an escape read as written (../api/jsonParse.ts). */
export const decodeResult = <A>(text: string | null): A => (text === null ? undefined : parseJson(text)) as A

/**
 * The fingerprint of each write of the port, from its arguments (computed only for a keyed
 * write). A signal's `expectedStep` is left out: the gateway fills it in from the step it reads
 * when the request arrives, so a client's retry of the same request may carry another one.
 */
export const writeFingerprint = {
  createTask: (entityId: string, input: unknown) => fingerprintOf("createTask", { entityId, input }),
  signal: (signal: { readonly taskId: string; readonly name: string; readonly payload: unknown }) =>
    fingerprintOf("signal", { taskId: signal.taskId, name: signal.name, payload: signal.payload }),
  // Members in any order are the same event (the store answers such a re-post with the stored one).
  appendEvent: (taskId: string, event: unknown) => fingerprintOf("appendEvent", { taskId, event: canonicalJsonValue(event) }),
  recordEvent: (taskId: string, record: unknown) => fingerprintOf("recordEvent", { taskId, record }),
  putDocument: (doc: { readonly bytes: Uint8Array | { readonly sha256: Effect.Effect<string> } }, signal: unknown) =>
    Effect.flatMap(
      // Spooled bytes give their own digest: the same as of the bytes in memory.
      Effect.suspend(() => doc.bytes instanceof Uint8Array ? sha256Hex(doc.bytes) : doc.bytes.sha256),
      (sha256) =>
      fingerprintOf("putDocument", { doc: { ...doc, bytes: { sha256 } }, signal: signal ?? null })),
  ingestData: (batch: unknown, signal: unknown) => fingerprintOf("ingestData", { batch, signal: signal ?? null }),
  rejectRow: (ledger: string, rowId: string) => fingerprintOf("rejectRow", { ledger, rowId }),
  updateRow: (ledger: string, rowId: string, field: string, value: unknown, expected?: { readonly value: unknown }) =>
    fingerprintOf("updateRow", { ledger, rowId, field, value, ...(expected !== undefined ? { expected: expected.value } : {}) }),
  claimStep: (taskId: string, override: boolean) => fingerprintOf("claimStep", { taskId, override }),
  releaseClaim: (taskId: string) => fingerprintOf("releaseClaim", { taskId }),
  createGlSession: (serviceId: string | undefined) => fingerprintOf("createGlSession", { serviceId: serviceId ?? null }),
  deleteGlConnection: () => fingerprintOf("deleteGlConnection", {})
} as const
