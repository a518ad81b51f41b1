/** The provider registry as wired by FileFetcherLive, and inline_base64. */
import { it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { randomBytes } from "node:crypto"
import { describe, expect } from "vitest"
import { IngestConfig, ingestDefaults } from "../../src/files/IngestConfig.js"
import { contentTypeFor, fileNameFor } from "../../src/files/pipeline.js"
import { FileFetcherLive } from "../../src/files/providers/index.js"
import { FileFetcher } from "../../src/files/FileFetcher.js"

const Live = FileFetcherLive.pipe(Layer.provide(IngestConfig.make({})))

describe("FileFetcherLive", () => {
  it.effect("registers inline_base64, local and url", () =>
    Effect.gen(function*() {
      const fetcher = yield* FileFetcher
      expect([...fetcher.providers].sort()).toEqual(["inline_base64", "local", "url"])
    }).pipe(Effect.provide(Live)))

  it.effect("an unknown provider is a 400 listing the known ones", () =>
    Effect.gen(function*() {
      const e = yield* Effect.flip((yield* FileFetcher).fetch({ provider: "s3", bucket: "b" }))
      expect(e._tag).toBe("BadRequest")
      expect(e.message).toBe(`fileRef.provider: unknown provider "s3"; known providers: inline_base64, local, url`)
    }).pipe(Effect.provide(Live)))
})

describe("inline_base64 provider", () => {
  it.effect("round-trips the exact bytes; the name and type come from the DTO or the fallback", () =>
    Effect.gen(function*() {
      const bytes = randomBytes(4097)
      const got = yield* (yield* FileFetcher).fetch({ provider: "inline_base64", data: bytes.toString("base64") })
      expect(Buffer.from(got.bytes).equals(bytes)).toBe(true)
      expect(got.fileName).toBeUndefined()
      const meta = { source: "inline", fileName: "ledger.csv" }
      expect(fileNameFor(meta, got, new Date())).toBe("ledger.csv")
      expect(contentTypeFor(meta, got, "ledger.csv")).toBe("text/csv")
    }).pipe(Effect.provide(Live)))

  it("a source's own file name past 255 characters is cut by characters, never through an emoji", () => {
    const now = new Date("2026-12-07T10:00:00.000Z")
    // 254 letters and an emoji: a cut at 255 UTF-16 units left half of the emoji, and the name was dropped.
    const long = `${"a".repeat(254)}📄📄.pdf`
    expect(fileNameFor({ source: "url" }, { fileName: long }, now)).toBe(`${"a".repeat(254)}📄`)
    expect(fileNameFor({ source: "url" }, { fileName: "📄".repeat(300) }, now)).toBe("📄".repeat(255))
  })

  it.effect("refuses characters outside the base64 alphabet and bad padding with a 400", () =>
    Effect.gen(function*() {
      const fetcher = yield* FileFetcher
      for (const data of ["aGk=!", "aGk", "aGk=\n", "a-_b", "aGk==="]) {
        const e = yield* Effect.flip(fetcher.fetch({ provider: "inline_base64", data }))
        expect(e._tag).toBe("BadRequest")
        expect(e.message).toMatch(/fileRef\.data: must be strict base64/)
      }
      const notString = yield* Effect.flip(fetcher.fetch({ provider: "inline_base64", data: 5 }))
      expect(notString._tag).toBe("BadRequest")
    }).pipe(Effect.provide(Live)))
})

const fromEnv = (env: Record<string, string>) =>
  Effect.gen(function*() {
    return yield* IngestConfig
  }).pipe(
    Effect.provide(IngestConfig.fromEnv),
    Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
  )

describe("IngestConfig", () => {
  it.effect("defaults: local off, 50 MiB, no allow-list, 5 s connect, 30 s total, 3 redirects", () =>
    Effect.gen(function*() {
      const config = yield* fromEnv({})
      expect(config).toEqual({
        localRoot: Option.none(),
        maxBytes: 50 * 1024 * 1024,
        urlAllow: [],
        connectTimeoutMs: 5000,
        timeoutMs: 30000,
        maxRedirects: 3,
        fetchesAtOnce: 4
      })
      expect(config).toEqual(ingestDefaults)
    }))

  it.effect("reads every setting and normalizes the allow-list like request URLs", () =>
    Effect.gen(function*() {
      const config = yield* fromEnv({
        SVC_LOCAL_INGEST_ROOT: "/srv/ingest",
        SVC_INGEST_MAX_BYTES: "1024",
        SVC_INGEST_URL_ALLOW: " LOCALHOST:8080, 2130706433:9000 ,[::1]:443,files.onprem:80,",
        SVC_INGEST_CONNECT_TIMEOUT_MS: "100",
        SVC_INGEST_TIMEOUT_MS: "200",
        SVC_INGEST_MAX_REDIRECTS: "0",
        SVC_INGEST_FETCHES_AT_ONCE: "2"
      })
      expect(config).toEqual({
        localRoot: Option.some("/srv/ingest"),
        maxBytes: 1024,
        urlAllow: ["localhost:8080", "127.0.0.1:9000", "[::1]:443", "files.onprem:80"],
        connectTimeoutMs: 100,
        timeoutMs: 200,
        maxRedirects: 0,
        fetchesAtOnce: 2
      })
    }))

  it.effect("refuses bad settings at start", () =>
    Effect.gen(function*() {
      for (
        const env of [
          { SVC_LOCAL_INGEST_ROOT: "relative/dir" },
          { SVC_INGEST_URL_ALLOW: "no-port" },
          { SVC_INGEST_URL_ALLOW: "host:0" },
          { SVC_INGEST_URL_ALLOW: "host:70000" },
          { SVC_INGEST_URL_ALLOW: "user@host:80" },
          { SVC_INGEST_MAX_BYTES: "0" },
          { SVC_INGEST_FETCHES_AT_ONCE: "0" },
          { SVC_INGEST_TIMEOUT_MS: "soon" },
          { SVC_INGEST_MAX_REDIRECTS: "-1" }
        ]
      ) {
        const exit = yield* Effect.exit(fromEnv(env))
        expect(Exit.isFailure(exit), JSON.stringify(env)).toBe(true)
      }
    }))

  it("make() fills the defaults and normalizes allow-list entries", () => {
    const c = IngestConfig.resolve({ localRoot: "/data", urlAllow: ["0x7f000001:81"] })
    expect(c.localRoot).toEqual(Option.some("/data"))
    expect(c.urlAllow).toEqual(["127.0.0.1:81"])
    expect(c.maxBytes).toBe(ingestDefaults.maxBytes)
    expect(() => IngestConfig.resolve({ urlAllow: ["nope"] })).toThrow(/not host:port/)
  })
})
