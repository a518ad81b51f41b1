/**
 * The request line and the request path's normalising take shortcuts for the usual request (a
 * line written field by field, a path with nothing to normalise returned as it is): each must
 * give exactly what the general way gives, whatever the text.
 */
import { describe, expect, it } from "vitest"
import { malformedPercentEncoding } from "../../src/http/errors/percentEncoding.js"
import { routerPath } from "../../src/http/server/nodeServer.js"
import { formatRequestLine, type RequestRecord } from "../../src/observability/requests.js"

const TEXTS = [
  "plain",
  "with \"quote\"",
  "back\\slash",
  "control\u0001\u001f",
  "tab\tnewline\n",
  "é ü ß",
  "\ud800 lone surrogate",
  "pair 😀",
  "\u2028\u2029",
  "<script>",
  ""
]

/** What the line was before it was written by hand: JSON.stringify of the record. */
const stringified = (r: RequestRecord, date: Date) =>
  JSON.stringify({
    time: date.toISOString(),
    level: r.status < 500 ? "info" : r.shed === true ? "warn" : "error",
    msg: "request",
    requestId: r.requestId,
    method: r.method,
    route: r.route ?? null,
    path: r.path,
    status: r.status,
    durationMs: r.durationMs,
    bytes: r.bytes,
    traceId: r.traceId,
    aborted: r.aborted ? true : undefined
  })

describe("the JSON request line", () => {
  it("is the text JSON.stringify makes of the record, whatever its strings", () => {
    const date = new Date(Date.UTC(2026, 11, 5, 6, 30, 0, 123))
    for (const text of TEXTS) {
      for (const [status, aborted, shed] of [[200, false, false], [499, true, false], [503, false, true], [500, false, false]] as const) {
        const record: RequestRecord = {
          requestId: text,
          traceId: status === 200 ? undefined : text,
          method: status === 500 ? text : "GET",
          route: status === 503 ? undefined : text,
          path: text,
          status,
          durationMs: 12.3,
          bytes: 15,
          aborted,
          shed
        }
        expect(formatRequestLine("json", record, date)).toBe(stringified(record, date))
      }
    }
  })

  it("without a date, carries the current time", () => {
    const before = Date.now()
    const line = JSON.parse(formatRequestLine("json", {
      requestId: "x", traceId: undefined, method: "GET", route: "/v1/health", path: "/v1/health", status: 200, durationMs: 0.1, bytes: 15, aborted: false
    }))
    const at = Date.parse(line.time)
    expect(at).toBeGreaterThanOrEqual(before)
    expect(at).toBeLessThanOrEqual(Date.now())
  })
})

/** The normalising the router path always had (decode, lower-case, single slashes, no trailing one). */
const normalised = (path: string) => {
  let decoded = path
  try {
    decoded = decodeURIComponent(path)
  } catch {
    // kept as it is
  }
  return decoded.toLowerCase().replace(/\/{2,}/g, "/").replace(/(.)\/+$/, "$1")
}

describe("the router path", () => {
  it("is the normalised path, with or without something to normalise", () => {
    const paths = [
      "/v1/health",
      "/V1/Health",
      "/v1//health",
      "/v1/health/",
      "/v1/health//",
      "/",
      "//",
      "/v1/tasks/%41bc/events/stream",
      "/v1/tasks/abc/EVENTS/stream",
      "/v1/tasks/%E9t%C3%A9",
      "/v1/tasks/%zz",
      "/v1/tasks/ÉTÉ",
      "/v1/tasks/İ",
      "/v1/tasks/a b",
      "/v1/ta\u212Asks"
    ]
    for (const path of paths) expect(routerPath(path), path).toBe(normalised(path))
  })

  it("a path without an escape has nothing malformed; one with a bad escape still says which", () => {
    expect(malformedPercentEncoding("/v1/health")).toBeUndefined()
    expect(malformedPercentEncoding("/v1/tasks/%41")).toBeUndefined()
    expect(malformedPercentEncoding("/v1/tasks/%zz")).toBe("%zz")
    expect(malformedPercentEncoding("/v1/tasks/%C3")).toBe("%C3")
  })
})
