/**
 * The Node response class of our servers: Node's, with one write per whole answer.
 *
 * Node 24 sends a response's headers and its whole body in one `write` when `end(body)` is its
 * only body write (`maybePrepareFinalChunk` in node:_http_outgoing), but not when
 * `strictContentLength` is set: then the body goes out with an empty final chunk behind it, a
 * `writev` of two and a second pass through the stream machinery. @effect/platform-node sets the
 * flag on every response, for the length checks of piped and streamed bodies. A body handed whole
 * to `end()` after `writeHead` passes that check when its length is the declared Content-Length:
 * for such a body the check is made here and the flag cleared; any other body keeps it (a
 * mismatch is still Node's own error). GET /v1/health: a `writev` with an empty chunk per answer
 * became one `write`, 1.09-1.24x capacity in interleaved runs (bench/PROFILE.md, "S1: one write
 * per answer").
 */
import * as http from "node:http"

const BODY_WRITTEN = Symbol("bodyWritten")

type Chunk = string | Uint8Array

const nodeWrite = http.ServerResponse.prototype.write as (this: http.ServerResponse, ...args: Array<unknown>) => boolean
const nodeEnd = http.ServerResponse.prototype.end as (this: http.ServerResponse, ...args: Array<unknown>) => http.ServerResponse

const byteLength = (chunk: Chunk, encoding: unknown): number =>
  typeof chunk === "string"
    ? Buffer.byteLength(chunk, typeof encoding === "string" ? encoding as BufferEncoding : "utf8")
    : chunk.byteLength

/** What Node keeps of the declared Content-Length (set by writeHead/setHeader; null when none). */
interface Declared {
  readonly _contentLength?: number | null
  [BODY_WRITTEN]?: boolean
}

export class GatewayResponse<Request extends http.IncomingMessage = http.IncomingMessage> extends http.ServerResponse<Request> {
  // Explicit: the default constructor spreads its arguments (an array per response).
  constructor(req: Request, options?: object) {
    // @ts-expect-error Node passes options (highWaterMark, rejectNonStandardBodyWrites); @types/node omits them.
    super(req, options)
  }
}

// Fixed arities, not rest parameters: no array per call.
Object.assign(GatewayResponse.prototype, {
  write(this: http.ServerResponse & Declared, chunk: unknown, encoding: unknown, callback: unknown): boolean {
    this[BODY_WRITTEN] = true
    return nodeWrite.call(this, chunk, encoding, callback)
  },
  end(this: http.ServerResponse & Declared, chunk: unknown, encoding: unknown, callback: unknown): http.ServerResponse {
    if (
      this.strictContentLength && this[BODY_WRITTEN] !== true && this.headersSent &&
      (typeof chunk === "string" || chunk instanceof Uint8Array) && chunk.length > 0 &&
      this._contentLength === byteLength(chunk, encoding)
    ) this.strictContentLength = false
    return nodeEnd.call(this, chunk, encoding, callback)
  }
})
