/**
 * The one decode step every request body goes through before a handler sees it. The body is
 * read once as bytes, checked and parsed here; the router then gets a request whose `json` is
 * the checked value, so no handler, schema or error formatter ever meets unchecked input:
 *
 * - media type: a body must say `application/json`, charset UTF-8 if named (no type: 415 too);
 * - encoding: invalid UTF-8 is refused (it would be stored as U+FFFD, not as sent): 400;
 * - syntax: malformed JSON is a 400 with the parser's reason;
 * - depth: nesting past `maxDepth` is a 400 naming the limit (nothing recursive downstream can
 *   overflow: the decode-error formatter and JSON.stringify both recurse);
 * - keys: `__proto__` is refused, naming its path (decoding it into a record would set the
 *   record's prototype instead of storing a key); other keys are ordinary data;
 * - text: a NUL or an unpaired surrogate in any key or string is refused, naming its path (the
 *   stores cannot keep them byte-exact, so what was acknowledged would not be what is served).
 *
 * An empty body reads as `{}`, so an endpoint whose fields are all optional needs no body.
 */
import * as HttpServerError from "effect/http/HttpServerError"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { isAscii, isUtf8 } from "node:buffer"
import { IncomingMessage } from "node:http"
import { BadRequest, PayloadTooLarge, UnsupportedMediaType } from "../../api/errors.js"
import { firstWhere, jsonValueProblem } from "../../api/jsonValue.js"
import { firstInexactNumber, inexactNumberProblem } from "../../api/jsonNumbers.js"
import { LARGE_INPUT, oneLargeAtATime, yieldBeforeLarge, yieldToEventLoop } from "../../lib/eventLoop.js"
import { parseWithLongStrings, textWithoutLongStrings } from "./jsonLongStrings.js"
import { Base64Literals, decodeLiterals, type KeptLiteral } from "./base64Literals.js"
import { quoted } from "../../lib/quoted.js"
import { parseJson } from "../../api/jsonParse.js"
import { countJsonItems } from "../../api/jsonScan.js"
import { BODY_REFUSED, bodyRefused } from "../server/nodeServer.js"
import { bodyBytesDone } from "../../lib/bufferRelease.js"
import { allocatedOrNone, type BodyBuffer, takeBodyBuffer } from "./bodyBuffers.js"

export { DEFAULT_MAX_JSON_DEPTH } from "../../api/jsonValue.js"

/**
 * The most items (values and keys: ../../api/jsonScan.ts countJsonItems) one JSON body may hold
 * (SVC_MAX_JSON_ITEMS). Its parse is one stretch of the event loop, and what it costs is the
 * items, not the bytes: 14 MiB of `[{},{},...]` (5 million objects) held the loop for 2.2-3.4 s,
 * a million empty objects 0.6-0.7 s, a million distinct keys 1.3 s (5.7 s written with escapes,
 * which count 8), while 10,000 ingest rows of 30 fields (610,001 items, 6 MiB) parse in 70 ms.
 * Counted from the bytes first (11 ms for the first million of `{},`; a base64 upload's one long
 * string is skipped by memchr).
 */
export const DEFAULT_MAX_JSON_ITEMS = 1_000_000

/** The 413 for a body holding more than `max` items. */
export const tooManyItems = (max: number): PayloadTooLarge =>
  new PayloadTooLarge({
    message: `The JSON body holds more than ${max} items (values and object keys; SVC_MAX_JSON_ITEMS): send it in parts`
  })

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"])

/**
 * `application/json` (what every document declares), with at most a UTF-8 charset; any case,
 * any other parameters. Linear: split and compare, no pattern that could backtrack.
 */
export const isJsonMediaType = (header: string): boolean => {
  const [essence, ...params] = header.split(";")
  const type = essence!.trim().toLowerCase()
  if (type !== "application/json") return false
  return params.every((p) => {
    const [name, value = ""] = p.split("=", 2)
    return name!.trim().toLowerCase() !== "charset" || /^"?utf-8"?$/i.test(value.trim())
  })
}

/**
 * The 415 for a body whose Content-Type (or its absence) is not the one `expected` (JSON unless
 * given), naming what was sent.
 */
export const unsupportedMediaType = (
  contentType: string | undefined,
  expected = "application/json (UTF-8)"
): UnsupportedMediaType =>
  new UnsupportedMediaType({
    message: `Content-Type must be ${expected}; got ${contentType === undefined ? "no Content-Type" : quoted(contentType)}`
  })

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false })

export type ParsedBody =
  | { readonly ok: true; readonly value: unknown }
  /**
   * Parsed but for base64 fields kept as bytes (./base64Literals.ts): the value holds their
   * placeholders and is not checked yet (a raw control character in a literal, found by its
   * decode, fails the body as JSON first, as it would have).
   */
  | {
    readonly ok: "base64"
    readonly value: unknown
    readonly bytes: Buffer
    readonly encoding: "latin1" | "utf8"
    readonly literals: ReadonlyArray<KeptLiteral>
  }
  | { readonly ok: false; readonly error: BadRequest | UnsupportedMediaType }

/** The JSON paths (object keys from the root) of a request body's base64 file content. */
export type Base64Fields = ReadonlyArray<ReadonlyArray<string>>

const malformed = (e: unknown): BadRequest => {
  const reason = e instanceof Error ? e.message.slice(0, 120) : "invalid JSON"
  return new BadRequest({ message: `Malformed request body: expected valid JSON (${reason})` })
}

/**
 * The parser's own error for a body whose first error is a raw control character at byte `at`:
 * every character before it lexes (the rest of the body parsed), so the parser meets it first
 * in the body's text up to it too, at the same position, line and column.
 */
export const controlCharacterError = (bytes: Buffer, at: number, encoding: "latin1" | "utf8"): BadRequest => {
  try {
    JSON.parse(bytes.toString(encoding, 0, at + 1))
  } catch (e) {
    return malformed(e)
  }
  return malformed(undefined)
}

const BACKSLASH_U = Buffer.from("\\u", "latin1")

/**
 * Whether a JSON text's parsed strings and keys may hold a NUL or an unpaired surrogate, from its
 * bytes (as decoded to parse it: Latin-1 for ASCII, else UTF-8 with invalid sequences refused or
 * replaced by U+FFFD). Only a `\u` escape can make one: a raw NUL is not JSON (JSON.parse refuses
 * control characters), and decoded bytes are never an unpaired surrogate. One search of the bytes
 * (memchr) instead of a test of every string: 3% of the CPU of S5's 1,000-event ingest.
 */
export const textsMayHaveProblems = (bytes: Buffer): boolean => bytes.indexOf(BACKSLASH_U) !== -1

/** Checks and parses one body (its bytes and Content-Type header). */
export const parseJsonBody = (
  bytes: Uint8Array,
  contentType: string | undefined,
  maxDepth: number,
  /** Where the body's base64 file content is, kept as bytes when long (./base64Literals.ts). */
  base64Fields: Base64Fields = []
): ParsedBody => checkParsedBody(bytes, parseJsonBodyUnchecked(bytes, contentType, base64Fields), maxDepth)

/** The checks of a body `parseJsonBodyUnchecked` parsed: its value's, then its numbers'. */
export const checkParsedBody = (bytes: Uint8Array, unchecked: ParsedBody, maxDepth: number): ParsedBody => {
  // A Buffer view (no copy): its `indexOf` is memchr, a plain Uint8Array's a byte loop (a 1.4 MB
  // base64 literal: 0.02 against 0.78 ms; 3.9% of S3's CPU profile).
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const parsed = unchecked.ok === true ? checkedValue(unchecked.value, maxDepth, textsMayHaveProblems(buffer)) : unchecked
  // Numbers: JSON.parse turns a literal a float cannot hold (9007199254740993) into another number
  // without a word, which would then be stored and echoed as acknowledged (src/api/jsonNumbers.ts).
  // Looked for in the bytes of a body that parsed; the path is worked out only for one that has one.
  // The scan skips strings by `indexOf` of their closing quote.
  if (parsed.ok === false || bytes.byteLength === 0) return parsed
  if (firstInexactNumber(buffer) === undefined) return parsed
  let problem: string | undefined
  try {
    // The body parsed, so it is UTF-8. Its long strings are left out: the path needs only keys
    // and numbers, and a large upload's base64 parsed again held the event loop for seconds.
    problem = inexactNumberProblem(textWithoutLongStrings(buffer, LONG_STRING), firstWhere)
  } catch {
    return parsed
  }
  return problem === undefined ? parsed : { ok: false, error: new BadRequest({ message: problem }) }
}

/**
 * The body parsed, its value not yet checked (checkParsedBody does that): the two steps apart for
 * a large body, the checks on a later turn of the event loop. A 24 MB body of small values took
 * 170 ms to parse and 160 ms to check and scan for numbers, one stretch of the loop before; two now.
 */
export const parseJsonBodyUnchecked = (
  bytes: Uint8Array,
  contentType: string | undefined,
  base64Fields: Base64Fields = []
): ParsedBody => {
  if (bytes.byteLength === 0) return { ok: true, value: {} }
  // A body without a type is refused too: it is what a page on another site can send with no
  // CORS preflight (a Blob in a no-cors fetch, sendBeacon), so reading it as JSON let any site
  // write (src/http/input/crossSite.ts).
  if (contentType === undefined || !isJsonMediaType(contentType)) {
    return { ok: false, error: unsupportedMediaType(contentType) }
  }
  const ascii = isAscii(bytes)
  // A large body: its long string literals are not copied twice (./jsonLongStrings.ts). Besides
  // ASCII, valid UTF-8 (a file name in another script) without a byte order mark (which the
  // decoder below drops and JSON.parse would refuse); anything else takes the whole way below.
  const encoding = bytes.byteLength < LARGE_INPUT ? undefined
    : ascii ? "latin1"
    : isUtf8(bytes) && !(bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) ? "utf8"
    : undefined
  if (encoding !== undefined) {
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    const parsed = parseWithLongStrings(buffer, LONG_STRING, base64Fields, encoding)
    if (parsed !== undefined) {
      return parsed.kept.length === 0
        ? { ok: true, value: parsed.value }
        : { ok: "base64", value: parsed.value, bytes: buffer, encoding, literals: parsed.kept }
    }
  }
  let text: string
  if (ascii) {
    // ASCII is UTF-8 whose every byte is one character: copied as Latin-1, 4-5x faster than the
    // validating decoder (1 MiB base64 upload: 0.29 vs 1.3 ms; bench/PROFILE.md, S3).
    text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1")
  } else {
    try {
      text = fatalUtf8.decode(bytes)
    } catch {
      return { ok: false, error: new BadRequest({ message: "Malformed request body: not valid UTF-8" }) }
    }
  }
  let value: unknown
  try {
    // Keys with escapes read as written, whatever other bodies had (../../api/jsonParse.ts).
    value = parseJson(text)
  } catch (e) {
    return { ok: false, error: malformed(e) }
  }
  return { ok: true, value }
}

/** String values at least this long in a large body are made from its bytes (./jsonLongStrings.ts). */
const LONG_STRING = 64 * 1024

const checkedValue = (value: unknown, maxDepth: number, texts = true): Exclude<ParsedBody, { readonly ok: "base64" }> => {
  const problem = jsonValueProblem(value, maxDepth, texts)
  return problem === undefined
    ? { ok: true, value }
    : { ok: false, error: new BadRequest({ message: problem }) }
}

/**
 * The whole body, read once in linear time. (The platform's `arrayBuffer` re-concatenates the
 * buffer on every chunk, quadratic in the body's size: 10 s for 50 MB; and it is not cached.)
 * On Node the chunks are collected by plain listeners on the IncomingMessage: its Effect stream
 * costs a channel step per 64 KiB chunk (measured: about 1 ms of a 1 MiB upload's CPU); any
 * other request (a web Request in tests) is read through its stream.
 */
const readBody = (request: HttpServerRequest.HttpServerRequest, reuse: boolean): Effect.Effect<ReadBody> =>
  Effect.map(
    request.source instanceof IncomingMessage
      ? collectIncoming(request.source, reuse)
      : Effect.map(Effect.orDie(Stream.runCollect(request.stream)), (parts): Collected => ({ parts, lease: undefined })),
    ({ lease, parts }): ReadBody => {
      // The whole body in a reused buffer (./bodyBuffers.ts): lent to the reader as it is.
      if (lease !== undefined && parts.length === 1) return { bytes: parts[0]!, release: lease.release }
      lease?.release()
      // One chunk is used as it is (Buffer.from would copy it, and the slice below again).
      const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts)
      return { bytes, release: noRelease }
    }
  )

/** A body read whole: `release` once its bytes are no longer read (a reused buffer goes back). */
interface ReadBody {
  readonly bytes: Uint8Array
  readonly release: () => void
}

const noRelease = () => {}

/** Exactly the body's bytes as an ArrayBuffer of their own (a small Buffer may be a view into a shared pool). */
const ownArrayBuffer = (bytes: Uint8Array): ArrayBuffer =>
  bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    ? bytes.buffer as ArrayBuffer
    : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer

interface Collected {
  readonly parts: ReadonlyArray<Uint8Array>
  /** The reused buffer the first part is a view of, if any. */
  readonly lease: BodyBuffer | undefined
}

/**
 * The chunks of a Node request body, up to its end. A request whose client left before its end
 * (Node fails it with "aborted", then closes it), or whose body the server refused (413),
 * interrupts the fiber as a client abort: the platform then answers nothing more (499 in the
 * request log) and logs no error. Another failure, on a connection still open, is a defect (as
 * its stream did). The listeners are removed either way.
 */
/** Ends a request's fiber the way the platform does when the client is gone (no error logged). */
const clientAbort = Effect.failCause(Cause.annotate(Cause.interrupt(), HttpServerError.ClientAbort.annotation))

const collectIncoming = (message: IncomingMessage, reuse: boolean): Effect.Effect<Collected> =>
  Effect.callback((resume) => {
    // Refused before this reader began: the answer is out, the rest is being discarded.
    if (bodyRefused(message)) return resume(clientAbort)
    // A declared length (Node delivers exactly that many bytes or fails the request) is read into
    // one buffer of its size: each chunk can be collected as soon as it is copied, instead of all
    // of them living beside their concatenation (a 40 MiB upload held 80 MiB at its end).
    const declared = Number(message.headers["content-length"])
    // A reused buffer (./bodyBuffers.ts) or one of its own; none when that much cannot be had: the
    // chunks are then collected as they come, like a chunked body's, rather than a 500 before a byte.
    const lease = reuse ? takeBodyBuffer(declared) : undefined
    const whole = lease?.bytes ?? (Number.isSafeInteger(declared) && declared > 0 ? allocatedOrNone(declared) : undefined)
    let filled = 0
    let handedOn = false
    const parts: Array<Uint8Array> = []
    const onData = (chunk: Uint8Array) => {
      if (whole !== undefined && filled + chunk.byteLength <= whole.byteLength) {
        // Copied: dead, but not counted for a young collection (src/lib/bufferRelease.ts) as
        // streamed bytes are: the parse that follows allocates as much again, and a forced
        // young collection during V8's incremental marking finishes that marking at once
        // (mark-compacts of 8-19 ms every 65 ms under S3's 1 MiB uploads).
        whole.set(chunk, filled)
        filled += chunk.byteLength
      } else parts.push(chunk)
    }
    // A body that will not be parsed: its chunks are dead once dropped here.
    const dropped = () => {
      let bytes = 0
      for (const part of parts) bytes += part.byteLength
      parts.length = 0
      bodyBytesDone(bytes)
      // Nothing reads the partial body: its reused buffer goes back.
      lease?.release()
    }
    // Refused mid-body (413, 503 or 408 already sent, nodeServer.ts): nothing more to answer.
    const onRefused = () => {
      cleanup()
      dropped()
      resume(clientAbort)
    }
    const onEnd = () => {
      if (bodyRefused(message)) return onRefused()
      cleanup()
      handedOn = true
      resume(Effect.succeed({ parts: whole === undefined ? parts : [whole.subarray(0, filled), ...parts], lease }))
    }
    // Closed before its end (the client left; or a refused body past its discard budget):
    // the response may already be ended by the server, so nothing else would stop this fiber.
    const onClose = () => {
      cleanup()
      dropped()
      resume(clientAbort)
    }
    const onError = (error: Error) => {
      cleanup()
      dropped()
      resume(message.socket === null || message.socket.destroyed ? clientAbort : Effect.die(error))
    }
    const cleanup = () => {
      message.off("data", onData)
      message.off("end", onEnd)
      message.off("error", onError)
      message.off("close", onClose)
      message.off(BODY_REFUSED, onRefused)
    }
    message.on("data", onData)
    message.on("end", onEnd)
    message.on("error", onError)
    message.on("close", onClose)
    message.on(BODY_REFUSED, onRefused)
    // Interrupted while reading: nothing reads the partial body (once handed on, its reader releases it).
    return Effect.sync(() => {
      cleanup()
      if (!handedOn) lease?.release()
    })
  })

const CHECKED_JSON = Symbol("gateway/checkedJson")

/**
 * The body a request's checkedJsonBodies parsed and checked, or undefined for a request that did
 * not come through it. HttpApi payloads are decoded from it (./parsedPayload.ts): Effect 4's
 * HttpApiBuilder would read `text`, which here is the value stringified again.
 */
export const checkedJson = (request: HttpServerRequest.HttpServerRequest): { readonly value: unknown } | undefined =>
  (request as { readonly [CHECKED_JSON]?: { readonly value: unknown } })[CHECKED_JSON]

/**
 * The same request, its body already read and parsed: everything else is inherited from the
 * original. Only the parsed value is kept, not the bytes nor their text (for a base64 upload
 * each is as large as the body, and they would live as long as the request): `text` and
 * `arrayBuffer` give the value serialized again, equal as JSON, not byte for byte (no handler
 * reads them). The Content-Type is set to JSON too, so that no reader picks another body parser
 * (an empty multipart body, say, would otherwise wait for a boundary that never comes).
 */
const withJson = (request: HttpServerRequest.HttpServerRequest, value: unknown): HttpServerRequest.HttpServerRequest => {
  const text = Effect.sync(() => JSON.stringify(value))
  return Object.create(request, {
    [CHECKED_JSON]: { value: { value } },
    json: { value: Effect.succeed(value) },
    text: { value: text },
    arrayBuffer: { value: Effect.map(text, (t) => new TextEncoder().encode(t).buffer as ArrayBuffer) },
    headers: { value: { ...request.headers, "content-type": "application/json" } }
  }) as HttpServerRequest.HttpServerRequest
}

/** The request of a body refused here, for the router's 405: reading its body fails with the refusal. */
const refusedBody = (request: HttpServerRequest.HttpServerRequest, error: BadRequest | UnsupportedMediaType | PayloadTooLarge): HttpServerRequest.HttpServerRequest => {
  const refused = Effect.fail(error)
  return Object.create(request, {
    json: { value: refused },
    text: { value: refused },
    arrayBuffer: { value: refused },
    urlParamsBody: { value: refused },
    stream: { value: Stream.fail(error) }
  }) as HttpServerRequest.HttpServerRequest
}

/**
 * Wraps an HttpApp: a request that may carry a body is read, checked and parsed first, and the
 * app sees a request whose `json`/`text`/`arrayBuffer` are the checked ones. Requests without a
 * body pass; raw-bytes bodies (`rawBody`) are read the same linear way but not parsed.
 */
export const checkedJsonBodies = (
  maxDepth: number,
  /** Requests whose body is raw bytes by contract (not JSON): read, not parsed. */
  rawBody: (request: HttpServerRequest.HttpServerRequest) => boolean = () => false,
  /** Requests whose handler streams the body itself (a raw upload): not read here at all. */
  streamedBody: (request: HttpServerRequest.HttpServerRequest) => boolean = () => false,
  /** Where a request's body carries base64 file content (none unless said: ./base64Literals.ts). */
  base64Fields: (request: HttpServerRequest.HttpServerRequest) => Base64Fields = () => [],
  /**
   * Whether a route takes this request's method on its path, asked only of a body refused here:
   * when none does, the router's 405 or 404 answers whatever the body was (a PUT where only GET
   * and POST are, with a malformed body, is told the method, as one without a body is), and the
   * request goes on with accessors that fail with the refusal, which no route will read.
   */
  methodRouted: (request: HttpServerRequest.HttpServerRequest) => boolean = () => true,
  /** The most items (values and keys) a body may hold (DEFAULT_MAX_JSON_ITEMS): past it, 413 before the parse. */
  maxItems: number = DEFAULT_MAX_JSON_ITEMS
) =>
<E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  E | BadRequest | UnsupportedMediaType | PayloadTooLarge,
  R | HttpServerRequest.HttpServerRequest
> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    if (!BODY_METHODS.has(request.method) || streamedBody(request)) return app
    const raw = rawBody(request)
    // A large body: decoding and parsing it, then the handler's work on it, each start on a
    // fresh turn of the event loop, so other requests are served in between (../lib/eventLoop.ts).
    // A reused buffer (./bodyBuffers.ts) only for a body parsed here: a raw body's bytes go on.
    const read = Effect.tap(
      readBody(request, !raw),
      // A client gone before the parse begins: its reused buffer goes back too.
      (body) => Effect.onInterrupt(yieldBeforeLarge(body.bytes.byteLength), () => Effect.sync(body.release))
    )
    return Effect.flatMap(read, ({ bytes, release }): Effect.Effect<
      HttpServerResponse.HttpServerResponse,
      E | BadRequest | UnsupportedMediaType | PayloadTooLarge,
      R | HttpServerRequest.HttpServerRequest
    > => {
      if (raw) {
        const withBytes = Object.create(request, { arrayBuffer: { value: Effect.succeed(ownArrayBuffer(bytes)) } }) as HttpServerRequest.HttpServerRequest
        return Effect.provideService(app, HttpServerRequest.HttpServerRequest, withBytes)
      }
      const size = bytes.byteLength
      const fields = size >= LARGE_INPUT ? base64Fields(request) : []
      const contentType = request.headers["content-type"]
      const unlimited = size < LARGE_INPUT
        ? Effect.sync((): ParsedBody | Ready => parseJsonBody(bytes, contentType, maxDepth, fields))
        // Large: the parse and the checks on two turns of the event loop, not one stretch.
        : Effect.flatMap(
          Effect.sync(() => parseJsonBodyUnchecked(bytes, contentType, fields)),
          (parsed) => parsed.ok === false ? Effect.succeed(parsed) : Effect.andThen(
            yieldToEventLoop,
            Effect.sync(() => checkParsedBody(bytes, parsed, maxDepth))
          )
        )
      // Nine items take at least 7 bytes (an escaped key and its value, `"\n":0,`): a body of
      // fewer than half as many bytes as the limit cannot hold too many. Counted in the parse's
      // turn (one large input at a time), not beside other bodies' counts.
      const parse = 2 * size >= maxItems && contentType !== undefined && isJsonMediaType(contentType)
        ? Effect.suspend(() =>
          countJsonItems(bytes, maxItems) > maxItems
            ? Effect.succeed<ParsedBody | Ready>({ ok: false, error: tooManyItems(maxItems) })
            : unlimited
        )
        : unlimited
      // Base64 file content kept as bytes is decoded after the parse, a slice at a time, before
      // the value's checks (a control character in it makes the body malformed JSON, the first error).
      const ready = Effect.flatMap(oneLargeAtATime(size, parse), (parsed): Effect.Effect<Ready> => {
        if (parsed.ok !== "base64") return Effect.succeed(parsed)
        const { bytes: kept, encoding, literals, value } = parsed
        return Effect.map(oneLargeAtATime(size, decodeLiterals(kept, literals)), (outcome): Ready => {
          if (outcome._tag === "NotJson") return { ok: false, error: controlCharacterError(kept, outcome.at, encoding) }
          const checked = checkedValue(value, maxDepth)
          return checked.ok === true ? { ok: true, value: checked.value, decoded: outcome.decoded } : checked
        })
      })
      const run = (value: unknown) =>
        Effect.provideService(
          Effect.andThen(yieldBeforeLarge(size), app),
          HttpServerRequest.HttpServerRequest,
          withJson(request, value)
        )
      // The bytes are read until here only (the value holds copies of its strings, the decoded
      // file content its own bytes): a reused buffer goes back before the handler runs.
      return Effect.flatMap(Effect.ensuring(ready, Effect.sync(release)), (outcome): Effect.Effect<
        HttpServerResponse.HttpServerResponse,
        E | BadRequest | UnsupportedMediaType | PayloadTooLarge,
        R | HttpServerRequest.HttpServerRequest
      > => {
        if (outcome.ok === false) {
          return methodRouted(request) ? Effect.fail(outcome.error) : Effect.provideService(app, HttpServerRequest.HttpServerRequest, refusedBody(request, outcome.error))
        }
        return outcome.decoded === undefined
          ? run(outcome.value)
          : Effect.provideService(run(outcome.value), Base64Literals, outcome.decoded)
      })
    })
  })

/** A body parsed and checked (with its base64 file content decoded), or why not. */
type Ready =
  | { readonly ok: false; readonly error: BadRequest | UnsupportedMediaType | PayloadTooLarge }
  | { readonly ok: true; readonly value: unknown; readonly decoded?: ReadonlyMap<string, Uint8Array | undefined> | undefined }
