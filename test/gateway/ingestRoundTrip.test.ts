import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ingestDefaults } from "../../src/files/IngestConfig.js"
import { fileProviders } from "../../src/files/providers/index.js"
import { startServer, type TestServer } from "../files/servers.js"
import { expectError, raw, withGateway } from "../support/gateway.js"
import { EXPENSE_TASK } from "../support/world.js"

const ingest = `/v1/tasks/${EXPENSE_TASK}/files/ingest`
const bytes = Buffer.from([0x25, 0x50, 0x44, 0x46, 0, 1, 2, 0xfe, 0xff])

let root: string
let source: TestServer
let target: TestServer

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "ingest-root-")))
  writeFileSync(join(root, "statement.pdf"), bytes)
  source = await startServer((req, res) => {
    if (req.url === "/export") {
      res.writeHead(200, { "content-type": "text/csv", "content-disposition": "attachment; filename=\"ledger.csv\"" })
      res.end("a,b\n1,2\n")
    } else res.end(bytes)
  })
  target = await startServer()
})
afterAll(async () => {
  rmSync(root, { recursive: true, force: true })
  await source.close()
  await target.close()
})

const gateway = () => ({
  providers: fileProviders({ ...ingestDefaults, localRoot: Option.some(root), urlAllow: [`127.0.0.1:${source.port}`] })
})

/** Ingest, then download: the exact bytes, name and type come back. */
const roundTrip = (body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const res = yield* raw("POST", ingest, { source: "receipts", ...body })
    expect(res.status).toBe(201)
    const dl = yield* raw("GET", res.body.downloadUrl)
    return { result: res.body, download: dl }
  })

describe("ingest through the gateway, each provider, round-tripped through download", () => {
  it.effect("local: basename, type from the name", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const { download, result } = yield* roundTrip({ fileRef: { provider: "local", path: join(root, "statement.pdf") } })
        expect(result).toMatchObject({ filename: "statement.pdf", contentType: "application/pdf", sizeBytes: bytes.length })
        expect(download.headers["content-type"]).toBe("application/pdf")
        expect(download.headers["content-disposition"]).toBe('attachment; filename="statement.pdf"')
        expect(download.headers["content-length"]).toBe(String(bytes.length))
        expect(download.bytes.equals(bytes)).toBe(true)
      }), gateway()))

  it.effect("url: name from Content-Disposition, type from the name", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const { download, result } = yield* roundTrip({ fileRef: { provider: "url", url: source.url("/export") } })
        expect(result).toMatchObject({ filename: "ledger.csv", contentType: "text/csv" })
        expect(download.text).toBe("a,b\n1,2\n")
      }), gateway()))

  it.effect("url: name from the URL path; the DTO's fileName and contentType override", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const a = yield* roundTrip({ fileRef: { provider: "url", url: source.url("/files/scan%20one.pdf") } })
        expect(a.result).toMatchObject({ filename: "scan one.pdf", contentType: "application/pdf", sizeBytes: bytes.length })
        expect(a.download.bytes.equals(bytes)).toBe(true)
        const b = yield* roundTrip({
          fileRef: { provider: "url", url: source.url("/files/x.bin") },
          fileName: "renamed.dat",
          contentType: "application/x-custom"
        })
        expect(b.result).toMatchObject({ filename: "renamed.dat", contentType: "application/x-custom" })
        expect(b.download.headers["content-type"]).toBe("application/x-custom")
      }), gateway()))

  it.effect("a refused source is a 400 in the spec's shape and the target sees nothing", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const before = target.connections
        expectError(yield* raw("POST", ingest, { source: "s", fileRef: { provider: "url", url: target.url("/") } }), 400, "Bad Request")
        expectError(
          yield* raw("POST", ingest, { source: "s", fileRef: { provider: "local", path: join(root, "../etc/passwd") } }),
          400,
          "Bad Request"
        )
        expect(target.connections).toBe(before)
        expect(target.requests).toHaveLength(0)
      }), gateway()))
})
