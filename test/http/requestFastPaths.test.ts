/**
 * The per-request shortcuts of the HTTP stack hold to what they replace (bench/PROFILE.md, "S1,
 * third pass"): the router path of a path already normal is the path itself, a request id is a
 * version 4 UUID and never repeats, the request metrics land in the same series as before, and
 * the request line's time (formatted once per millisecond) is each line's own.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { isLinkPath, routedPath } from "../../src/api/linkPath.js"
import { normalisedRouterPath, routerPath } from "../../src/http/server/nodeServer.js"
import { newRequestId } from "../../src/observability/requestContext.js"
import { recordHttpRequest } from "../../src/observability/metrics.js"
import { renderPrometheus } from "../../src/observability/prometheus.js"
import { formatRequestLine, observeRequests, type RequestRecord } from "../../src/observability/requests.js"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"

const pathChars = fc.constantFrom(..."/aZ%2F3fA-_.~ßÄ:@!$&'()*+,;=?#%7e".split(""), "/", "/", "%41", "%zz", "//")

describe("routerPath's shortcut for paths already as the router reads them", () => {
  it("gives what the full normalisation gives, for any path", () => {
    fc.assert(
      fc.property(fc.constantFrom("/", "/", "*", "http://h/"), fc.array(pathChars, { maxLength: 24 }), (first, parts) => {
        const path = first + parts.join("")
        expect(routerPath(path)).toBe(normalisedRouterPath(path))
      }),
      { numRuns: 5_000 }
    )
  })

  it("still normalises what needs it", () => {
    expect(routerPath("/V1/Tasks/x/events/%73tream/")).toBe("/v1/tasks/x/events/stream")
    expect(routerPath("//v1//tasks")).toBe("/v1/tasks")
    expect(routerPath("/")).toBe("/")
    expect(routerPath("/v1/health")).toBe("/v1/health")
    // Spellings the router serves as the event stream (a share counted by path must see them too).
    expect(routerPath("*v1/tasks/x/events/stream")).toBe("/v1/tasks/x/events/stream")
    expect(routerPath("/v1/tasks/x/events/stream;x")).toBe("/v1/tasks/x/events/stream")
    expect(routerPath("HTTP://h/v1/tasks/x/events/stream")).toBe("/v1/tasks/x/events/stream")
    // A malformed escape is left as it is (the router answers it 400); the rest is still read.
    expect(routerPath("//V1/%zz/#x")).toBe("/v1/%zz")
  })
})

/** isLinkPath without its shortcut (the path as the router matches it starts with /links/). */
const slowIsLinkPath = (url: string): boolean => routedPath(url).startsWith("/links/")

const linkChars = fc.constantFrom("/", "/", "links", "LiNkS", "link", "s", "?", ";", "#", "%6C", "%2F", "x", "%zz", "http://h", "*", "%E2%84%AA", "HTTP://h/")

describe("isLinkPath's shortcut for paths without escapes", () => {
  it("gives what the full reading gives, for any path", () => {
    fc.assert(
      fc.property(fc.array(linkChars, { maxLength: 10 }).map((parts) => parts.join("")), (url) => {
        expect(isLinkPath(url)).toBe(slowIsLinkPath(url))
      }),
      { numRuns: 5_000 }
    )
    expect(isLinkPath("//LINKS//abc")).toBe(true)
    expect(isLinkPath("/links?x=/")).toBe(false)
    expect(isLinkPath("/%6Cinks/abc")).toBe(true)
    expect(isLinkPath("/%6Cinks/abc%zz")).toBe(true)
    // Spellings the server routes (or reads) as a link: absolute-form, a first character that is
    // not `/` (the router skips it), the Kelvin sign beside a malformed escape.
    expect(isLinkPath("http://h/links/abc")).toBe(true)
    expect(isLinkPath("HTTP://h/x/../LINKS/abc%zz")).toBe(true)
    expect(isLinkPath("*links/abc")).toBe(true)
    expect(isLinkPath("/lin%E2%84%AAs/abc%zz")).toBe(true)
    expect(isLinkPath("*linkss/abc")).toBe(false)
  })
})

describe("request ids", () => {
  it("are version 4 UUIDs, distinct across many", () => {
    const seen = new Set<string>()
    for (let i = 0; i < 20_000; i++) {
      const id = newRequestId()
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      seen.add(id)
    }
    expect(seen.size).toBe(20_000)
  })
})

describe("request metrics", () => {
  it("count each route, method and status in its own labelled series, and time each route and method", () => {
    const route = `/test/fast-paths/${process.pid}`
    recordHttpRequest("GET", route, 200, 0.002)
    recordHttpRequest("GET", route, 200, 0.004)
    recordHttpRequest("GET", route, 404, 0.001)
    recordHttpRequest("BREW", route, 200, 0.001)
    const text = renderPrometheus()
    const line = (name: string, labels: string) =>
      text.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes(labels) && l.includes(`route="${route}"`))
    expect(line("http_requests_total", `method="GET"`) !== undefined).toBe(true)
    const count = (labels: Array<string>) =>
      text.split("\n").filter((l) => l.startsWith("http_requests_total{") && l.includes(`route="${route}"`) && labels.every((x) => l.includes(x)))
        .map((l) => Number(l.split(" ").pop()))
    expect(count([`method="GET"`, `status="200"`])).toEqual([2])
    expect(count([`method="GET"`, `status="404"`])).toEqual([1])
    expect(count([`method="OTHER"`, `status="200"`])).toEqual([1])
    const durations = text.split("\n").filter((l) =>
      l.startsWith("http_request_duration_seconds_count{") && l.includes(`route="${route}"`) && l.includes(`method="GET"`)
    )
    expect(durations.map((l) => Number(l.split(" ").pop()))).toEqual([3])
  })
})

describe("the request line's time", () => {
  const record: RequestRecord = {
    requestId: "r",
    traceId: undefined,
    method: "GET",
    route: "/v1/health",
    path: "/v1/health",
    status: 200,
    durationMs: 0.4,
    bytes: 15,
    aborted: false
  }
  it("is the line's own millisecond, whatever lines came before", () => {
    const times = [0, 1, 1, 999, 1_000, 86_400_000 - 1, 1_764_900_000_123, 1_764_900_000_123, 1_764_900_000_124, 5]
    for (const ms of times) {
      const line = JSON.parse(formatRequestLine("json", record, new Date(ms))) as { time: string }
      expect(line.time).toBe(new Date(ms).toISOString())
    }
    const now = Date.now()
    const line = JSON.parse(formatRequestLine("json", record)) as { time: string }
    expect(Date.parse(line.time)).toBeGreaterThanOrEqual(now)
    expect(Date.parse(line.time)).toBeLessThanOrEqual(Date.now())
  })
})

describe("the request line's byte count", () => {
  it("is the text body's declared length, without encoding the text (the adapter writes the string)", async () => {
    for (const text of ["", "{\"status\":\"ok\"}", "é".repeat(5_000), "東京🧾".repeat(1_000)]) {
      const lines: Array<string> = []
      const observe = observeRequests({ line: (l) => lines.push(l), log: { level: "Info", format: "json" } })
      const response = await Effect.runPromise(
        observe(Effect.succeed(HttpServerResponse.text(text, { contentType: "application/json" }))).pipe(
          Effect.provideService(HttpServerRequest.HttpServerRequest, HttpServerRequest.fromWeb(new Request("http://localhost/v1/x")))
        )
      )
      expect(JSON.parse(lines[0]!).bytes).toBe(Buffer.byteLength(text))
      // The body still holds its text only: nothing encoded it to count it.
      expect((response.body as unknown as { _body?: Uint8Array })._body).toBeUndefined()
    }
  })
})
