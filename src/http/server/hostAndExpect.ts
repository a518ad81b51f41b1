/**
 * The Host and Expect checks Node makes itself (`requireHostHeader`, and a 417 for an Expect it
 * does not know), made here instead so their answers come in the spec's error shape with the
 * request's id and log line (./nodeServer.ts): Node's were a 400 with an empty chunked body and
 * a 417 with an empty one. And one check Node does not make: two Host headers (Node keeps the
 * first and drops the other) are a 400, as RFC 9112 section 3.2 requires.
 */
import type * as http from "node:http"
import { errorJson } from "../errors/errorBody.js"
import { quoted } from "../../lib/quoted.js"

export interface EarlyAnswer {
  readonly status: number
  readonly body: string
}

/** How many times the request carries header `name` (lower case): Node joins or drops repeats. */
const headerCount = (req: http.IncomingMessage, name: string): number => {
  let n = 0
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === name) n++
  return n
}

/**
 * An HTTP/1.1 request without a Host header, or any request with more than one: 400 (RFC 9112
 * section 3.2). HTTP/1.0 may omit it, as Node allows.
 */
export const hostRefusal = (req: http.IncomingMessage): EarlyAnswer | undefined => {
  const n = headerCount(req, "host")
  if (n === 1 || (n === 0 && !(req.httpVersionMajor === 1 && req.httpVersionMinor === 1))) return undefined
  const message = n === 0
    ? "The request has no Host header: an HTTP/1.1 request must send one (RFC 9112, section 3.2)"
    : `The request has ${n} Host headers: exactly one is accepted (RFC 9112, section 3.2)`
  return { status: 400, body: errorJson(400, "Bad Request", message) }
}

/** Whether the request's one Expect header is exactly `100-continue` (in any case, spaces aside). */
export const isContinueOnly = (req: http.IncomingMessage): boolean =>
  headerCount(req, "expect") === 1 && String(req.headers.expect ?? "").trim().toLowerCase() === "100-continue"

/** The answer to an Expect other than 100-continue (Node emits `checkExpectation` for most of those). */
export const expectationFailed = (req: http.IncomingMessage): EarlyAnswer => ({
  status: 417,
  body: errorJson(
    417,
    "Expectation Failed",
    `Expect ${quoted(String(req.headers.expect ?? ""))} is not supported: the only expectation accepted is "100-continue"`
  )
})
