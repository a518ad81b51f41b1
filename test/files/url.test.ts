/**
 * The url provider's good paths and ordinary failures against loopback servers on the
 * allow-list (the hostile table lives in hostile.test.ts).
 */
import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { PayloadTooLarge } from "../../src/api/errors.js"
import { IngestConfig, type IngestConfigInput } from "../../src/files/IngestConfig.js"
import { contentTypeFor, fileNameFor } from "../../src/files/pipeline.js"
import { fileProviders } from "../../src/files/providers/index.js"
import { FileFetcher, type FileFetcherService } from "../../src/files/FileFetcher.js"
import { closedPort, startServer, testLookup, type TestServer } from "./servers.js"
import { HUGE_TOTAL, hugeProgress, PAYLOAD, slowProgress, sourceHandler } from "./sources.js"
import { until } from "../support/waitFor.js"

const CAP = 256 * 1024

let source: TestServer
let other: TestServer
let deadPort: number

const fetcherWith = (overrides: IngestConfigInput = {}): FileFetcherService =>
  FileFetcher.fromProviders(
    fileProviders(
      IngestConfig.resolve({
        maxBytes: CAP,
        urlAllow: [`127.0.0.1:${source.port}`, `127.0.0.1:${other.port}`, `127.0.0.1:${deadPort}`],
        connectTimeoutMs: 300,
        timeoutMs: 3_000,
        ...overrides
      }),
      { lookup: testLookup }
    )
  )

const fetchUrl = (url: string, headers?: Record<string, unknown>, fetcher = fetcherWith()) =>
  fetcher.fetch({ provider: "url", url, ...(headers !== undefined ? { headers } : {}) })

const refused = (url: string, headers?: Record<string, unknown>, fetcher = fetcherWith()) =>
  Effect.flip(fetchUrl(url, headers, fetcher))

const meta = { source: "bank-feed" }
const NOW = new Date("2026-01-02T03:04:05.678Z")

beforeAll(async () => {
  source = await startServer(sourceHandler)
  other = await startServer(sourceHandler)
  deadPort = await closedPort()
})
afterAll(async () => {
  await Promise.all([source.close(), other.close()])
})

describe("url provider: good cases", () => {
  it.live("round-trips the exact bytes, the decoded URL name and the remote type", () =>
    Effect.gen(function*() {
      const got = yield* fetchUrl(source.url("/files/r%C3%A9sum%C3%A9.pdf"))
      expect(Buffer.from(got.bytes).equals(PAYLOAD)).toBe(true)
      expect(got.fileName).toBe("résumé.pdf")
      expect(got.contentType).toBe("application/pdf")
      const name = fileNameFor(meta, got, NOW)
      expect(name).toBe("résumé.pdf")
      expect(contentTypeFor(meta, got, name)).toBe("application/pdf")
    }))

  it.live("prefers Content-Disposition filename* over filename and the URL", () =>
    Effect.gen(function*() {
      const got = yield* fetchUrl(source.url("/cd-star"))
      expect(Buffer.from(got.bytes).toString()).toBe("a,b\n1,2\n")
      expect(got.fileName).toBe("€ rates.csv")
      expect(got.contentType).toBe("text/csv; charset=utf-8")
      expect(contentTypeFor(meta, got, fileNameFor(meta, got, NOW))).toBe("text/csv")
    }))

  it.live("reads a quoted Content-Disposition filename and strips path parts from it", () =>
    Effect.gen(function*() {
      expect((yield* fetchUrl(source.url("/cd-plain"))).fileName).toBe(`report "q1".xlsx`)
      expect((yield* fetchUrl(source.url("/cd-path"))).fileName).toBe("passwd")
    }))

  it.live("a plain filename in raw UTF-8 is read as UTF-8 (it had been stored as rÃ©sumÃ©); a Latin-1 one stays Latin-1", () =>
    Effect.gen(function*() {
      expect((yield* fetchUrl(source.url("/cd-utf8"))).fileName).toBe("résumé 📄.pdf")
      expect((yield* fetchUrl(source.url("/cd-latin1"))).fileName).toBe("café.txt")
    }))

  it.live("without a name the pipeline falls back to <source>-<timestamp> and the remote type", () =>
    Effect.gen(function*() {
      const got = yield* fetchUrl(source.url("/"))
      expect(got.fileName).toBeUndefined()
      const name = fileNameFor(meta, got, NOW)
      expect(name).toBe("bank-feed-2026-01-02T03-04-05-678Z")
      expect(contentTypeFor(meta, got, name)).toBe("application/x-custom")
    }))

  it.live("a name without an extension keeps the remote type; the DTO overrides both", () =>
    Effect.gen(function*() {
      const got = yield* fetchUrl(source.url("/noext/data"))
      expect(got.fileName).toBe("data")
      expect(contentTypeFor(meta, got, "data")).toBe("image/png")
      const override = { ...meta, fileName: "x.json", contentType: "text/plain" }
      expect(fileNameFor(override, got, NOW)).toBe("x.json")
      expect(contentTypeFor(override, got, "x.json")).toBe("text/plain")
    }))

  it.live("an empty body is an empty file", () =>
    Effect.gen(function*() {
      const got = yield* fetchUrl(source.url("/empty.txt"))
      expect(got.bytes.length).toBe(0)
      expect(got.fileName).toBe("empty.txt")
    }))
})

describe("url provider: redirects", () => {
  it.live("follows up to 3 redirects (relative Location) and names the file from the final URL", () =>
    Effect.gen(function*() {
      const before = source.requests.length
      const got = yield* fetchUrl(source.url("/chain/3/final.txt"))
      expect(Buffer.from(got.bytes).toString()).toBe("landed")
      expect(got.fileName).toBe("final.txt")
      expect(source.requests.length - before).toBe(4)
    }))

  it.live("refuses a 4th redirect without following it", () =>
    Effect.gen(function*() {
      const before = source.requests.length
      const e = yield* refused(source.url("/chain/4/final.txt"))
      expect(e._tag).toBe("BadRequest")
      expect(e.message).toMatch(/too many redirects \(more than 3/)
      expect(source.requests.length - before).toBe(4)
    }))

  it.live("honors SVC_INGEST_MAX_REDIRECTS=0", () =>
    Effect.gen(function*() {
      const e = yield* refused(source.url("/chain/1/final.txt"), undefined, fetcherWith({ maxRedirects: 0 }))
      expect(e.message).toMatch(/too many redirects \(more than 0/)
    }))

  it.live("follows 301, 303, 307 and 308 as GETs", () =>
    Effect.gen(function*() {
      for (const status of [301, 303, 307, 308]) {
        const got = yield* fetchUrl(source.url(`/to?status=${status}&loc=/chain/0/done.bin`))
        expect(Buffer.from(got.bytes).toString()).toBe("landed")
        expect(got.fileName).toBe("done.bin")
      }
    }))

  it.live("a redirect without Location is a 400", () =>
    Effect.gen(function*() {
      const e = yield* refused(source.url("/no-location"))
      expect(e.message).toMatch(/answered 302 without a Location header/)
    }))

  it.live("keeps caller headers on a same-origin redirect and forwards only safe ones when the origin changes", () =>
    Effect.gen(function*() {
      const headers = { Authorization: "Bearer s3cret", Cookie: "a=b", "X-Trace": "t1" }
      const same = yield* fetchUrl(source.url(`/to?loc=/echo-headers`), headers)
      const sameSeen = JSON.parse(Buffer.from(same.bytes).toString())
      expect(sameSeen.authorization).toBe("Bearer s3cret")
      expect(sameSeen.cookie).toBe("a=b")

      const cross = yield* fetchUrl(source.url(`/to?loc=${encodeURIComponent(other.url("/echo-headers"))}`), headers)
      const crossSeen = JSON.parse(Buffer.from(cross.bytes).toString())
      expect(crossSeen.authorization).toBeUndefined()
      expect(crossSeen.cookie).toBeUndefined()
      expect(crossSeen["x-trace"]).toBeUndefined()
      expect(crossSeen.host).toBe(`127.0.0.1:${other.port}`)
    }))
})

describe("url provider: headers", () => {
  it.live("passes custom headers; never Host, Connection or other hop-by-hop headers", () =>
    Effect.gen(function*() {
      const got = yield* fetchUrl(source.url("/echo-headers"), {
        "X-Custom": "yes",
        Accept: "text/csv",
        Host: "evil.example",
        Connection: "keep-alive, X-Custom",
        "Keep-Alive": "timeout=600",
        "Transfer-Encoding": "chunked",
        "Content-Length": "5",
        Upgrade: "websocket",
        TE: "trailers",
        Trailer: "X-Foo",
        "Proxy-Authorization": "Basic eDp5",
        "Proxy-Connection": "keep-alive"
      })
      const seen = JSON.parse(Buffer.from(got.bytes).toString())
      expect(seen["x-custom"]).toBe("yes")
      expect(seen.accept).toBe("text/csv")
      expect(seen.host).toBe(`127.0.0.1:${source.port}`)
      expect(seen.connection).toBe("close")
      for (const h of ["keep-alive", "transfer-encoding", "content-length", "upgrade", "te", "trailer", "proxy-authorization", "proxy-connection"]) {
        expect(seen[h], h).toBeUndefined()
      }
      expect(seen["user-agent"]).toBe("tenant-gateway-ingest/1")
    }))

  it.live("a caller's User-Agent wins", () =>
    Effect.gen(function*() {
      const got = yield* fetchUrl(source.url("/echo-headers"), { "user-agent": "mine/2" })
      expect(JSON.parse(Buffer.from(got.bytes).toString())["user-agent"]).toBe("mine/2")
    }))

  it.live("refuses non-string header values, CR/LF in values and bad header names, before any request", () =>
    Effect.gen(function*() {
      const before = source.requests.length
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ "x-n": 5 }, /fileRef\.headers\.x-n: header values must be strings/],
        [{ "x-n": ["a"] }, /fileRef\.headers\.x-n: header values must be strings/],
        [{ "x-n": null }, /fileRef\.headers\.x-n: header values must be strings/],
        [{ "x-n": "a\r\nInjected: 1" }, /must not contain control characters/],
        [{ "bad name": "x" }, /fileRef\.headers\.bad name: header names must be HTTP tokens/]
      ]
      for (const [headers, why] of cases) {
        const e = yield* refused(source.url("/echo-headers"), headers)
        expect(e._tag).toBe("BadRequest")
        expect(e.message).toMatch(why)
      }
      const notObject = yield* Effect.flip(fetcherWith().fetch({ provider: "url", url: source.url("/"), headers: "x" }))
      expect(notObject._tag).toBe("BadRequest")
      expect(source.requests.length).toBe(before)
    }))
})

describe("url provider: limits and failing sources", () => {
  it.live("refuses a streamed body over the cap with 413 and drops the connection while the server keeps sending", () =>
    Effect.gen(function*() {
      const started = Date.now()
      const e = yield* refused(source.url("/huge"))
      expect(e).toBeInstanceOf(PayloadTooLarge)
      expect(e.statusCode).toBe(413)
      expect(e.message).toMatch(/body exceeds the 262144-byte ingest limit/)
      // The server sees the hang-up long before it could send everything.
      yield* Effect.promise(() => waitFor(() => hugeProgress.closed))
      expect(hugeProgress.finished).toBe(false)
      expect(hugeProgress.written).toBeLessThan(HUGE_TOTAL)
      expect(Date.now() - started).toBeLessThan(2_000)
    }))

  it.live("refuses a declared Content-Length over the cap before reading the body", () =>
    Effect.gen(function*() {
      const e = yield* refused(source.url("/declared-huge"))
      expect(e._tag).toBe("PayloadTooLarge")
      expect(e.message).toContain(`declares ${HUGE_TOTAL} bytes`)
    }))

  it.live("a body of exactly the cap is accepted", () =>
    Effect.gen(function*() {
      const got = yield* fetchUrl(source.url("/files/r%C3%A9sum%C3%A9.pdf"), undefined, fetcherWith({ maxBytes: PAYLOAD.length }))
      expect(got.bytes.length).toBe(PAYLOAD.length)
      const e = yield* refused(source.url("/files/r%C3%A9sum%C3%A9.pdf"), undefined, fetcherWith({ maxBytes: PAYLOAD.length - 1 }))
      expect(e._tag).toBe("PayloadTooLarge")
    }))

  it.live("a slow body hits the total timeout (400) and the request is torn down", () =>
    Effect.gen(function*() {
      slowProgress.closed = false
      const started = Date.now()
      const e = yield* refused(source.url("/slow"), undefined, fetcherWith({ timeoutMs: 300 }))
      expect(e._tag).toBe("BadRequest")
      expect(e.message).toBe("fileRef.url: timed out after 300 ms (SVC_INGEST_TIMEOUT_MS)")
      expect(Date.now() - started).toBeLessThan(1_500)
      yield* Effect.promise(() => waitFor(() => slowProgress.closed))
    }))

  it.live("a server that never answers hits the total timeout", () =>
    Effect.gen(function*() {
      const e = yield* refused(source.url("/stall"), undefined, fetcherWith({ timeoutMs: 300 }))
      expect(e.message).toMatch(/timed out after 300 ms/)
    }))

  it.live("a host that cannot be reached in time hits the connect timeout", () =>
    Effect.gen(function*() {
      const started = Date.now()
      const e = yield* refused("http://blackhole.test:81/x", undefined, fetcherWith({ connectTimeoutMs: 200 }))
      expect(e._tag).toBe("BadRequest")
      expect(e.message).toMatch(/could not connect to blackhole\.test:81 within 200 ms \(SVC_INGEST_CONNECT_TIMEOUT_MS\)/)
      expect(Date.now() - started).toBeLessThan(1_500)
    }))

  it.live("remote non-2xx answers 400 with the remote status", () =>
    Effect.gen(function*() {
      for (const status of [404, 500, 304]) {
        const e = yield* refused(source.url(`/status/${status}`))
        expect(e._tag).toBe("BadRequest")
        expect(e.message).toBe(`fileRef.url: source answered ${status}`)
      }
    }))

  it.live("connection refused and DNS failure answer 400 naming the reason", () =>
    Effect.gen(function*() {
      const refusedConn = yield* refused(`http://127.0.0.1:${deadPort}/x`)
      expect(refusedConn.message).toMatch(/connection refused by 127\.0\.0\.1:\d+ \(ECONNREFUSED\)/)
      const nx = yield* refused("http://nxdomain.test/x")
      expect(nx.message).toMatch(/could not resolve host nxdomain\.test \(ENOTFOUND\)/)
    }))

  it.live("a body cut short answers 400", () =>
    Effect.gen(function*() {
      const e = yield* refused(source.url("/truncated"))
      expect(e._tag).toBe("BadRequest")
      expect(e.message).toMatch(/source (broke off the body|closed the connection) after 10 bytes/)
    }))
})

const waitFor = async (cond: () => boolean, ms = 2_000): Promise<void> => {
  await until(cond, { timeoutMs: ms, everyMs: 10 })
}
