/**
 * The JSON request line is written field by field (src/observability/requests.ts); it must be
 * exactly what JSON.stringify of the record gives, for any text in the path and ids (quotes,
 * backslashes, control characters, other scripts, lone surrogates) and any number.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { formatRequestLine, type RequestRecord } from "../../src/observability/requests.js"

/** What the line was made with before: JSON.stringify of the record object. */
const reference = (time: string, record: RequestRecord): string =>
  JSON.stringify({
    time,
    level: record.status < 500 ? "info" : record.shed === true ? "warn" : "error",
    msg: "request",
    requestId: record.requestId,
    method: record.method,
    route: record.route ?? null,
    path: record.path,
    status: record.status,
    durationMs: record.durationMs,
    bytes: record.bytes,
    traceId: record.traceId,
    aborted: record.aborted ? true : undefined
  })

const text = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.string({ unit: fc.constantFrom("\"", "\\", "\n", "\u0000", "\u007f", "\u2028", "\ud800", "\udc00", "é", "/", "a") })
)
const number = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -0, 1e21, 1.5e-7, 499, 503, 599))

const record: fc.Arbitrary<RequestRecord> = fc.record({
  requestId: text,
  traceId: fc.option(text, { nil: undefined }),
  method: text,
  route: fc.option(text, { nil: undefined }),
  path: text,
  status: number,
  durationMs: number,
  bytes: number,
  aborted: fc.boolean(),
  shed: fc.boolean()
})

describe("the JSON request line", () => {
  it("is JSON.stringify of the record, for any text and number", () => {
    const date = new Date(Date.UTC(2026, 11, 6, 5, 0, 0, 123))
    fc.assert(fc.property(record, (r) => {
      expect(formatRequestLine("json", r, date)).toBe(reference(date.toISOString(), r))
    }), { numRuns: 3000 })
  })

  it("is one parseable line for a hostile path", () => {
    const line = formatRequestLine("json", {
      requestId: "id", traceId: undefined, method: "GET", route: undefined,
      path: "/v1/\"x\"\n{\"level\":\"error\"}\\", status: 404, durationMs: 0.3, bytes: 0, aborted: true
    })
    expect(line.includes("\n")).toBe(false)
    expect(JSON.parse(line)).toMatchObject({ path: "/v1/\"x\"\n{\"level\":\"error\"}\\", route: null, aborted: true })
  })
})
