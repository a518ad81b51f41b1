/** The local provider's good paths and limits, under a temp-dir root. */
import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { PayloadTooLarge } from "../../src/api/errors.js"
import { IngestConfig } from "../../src/files/IngestConfig.js"
import { contentTypeFor, fileNameFor } from "../../src/files/pipeline.js"
import { fileProviders } from "../../src/files/providers/index.js"
import { FileFetcher } from "../../src/files/FileFetcher.js"

const CAP = 64 * 1024
const PDF = randomBytes(20_000)

let tmp: string
let root: string

const fetcherFor = (localRoot: string, maxBytes = CAP) =>
  FileFetcher.fromProviders(fileProviders(IngestConfig.resolve({ localRoot, maxBytes })))

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ingest-local-")))
  root = path.join(tmp, "root")
  fs.mkdirSync(path.join(root, "docs", "2026"), { recursive: true })
  fs.writeFileSync(path.join(root, "docs", "2026", "report.pdf"), PDF)
  fs.writeFileSync(path.join(root, "empty"), "")
  fs.writeFileSync(path.join(root, "exact.bin"), Buffer.alloc(CAP, 1))
  fs.writeFileSync(path.join(root, "big.bin"), Buffer.alloc(CAP + 1, 1))
  fs.writeFileSync(path.join(root, "résumé 1.docx"), "docx")
  fs.symlinkSync(path.join(root, "docs", "2026", "report.pdf"), path.join(root, "alias.pdf"))
  fs.symlinkSync(root, path.join(tmp, "root-link"))
})

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true })
})

const meta = { source: "uploads" }

describe("local provider", () => {
  it.effect("round-trips the exact bytes, the basename and the type guessed from it", () =>
    Effect.gen(function*() {
      const got = yield* fetcherFor(root).fetch({ provider: "local", path: path.join(root, "docs", "2026", "report.pdf") })
      expect(Buffer.from(got.bytes).equals(PDF)).toBe(true)
      expect(got.fileName).toBe("report.pdf")
      expect(got.contentType).toBeUndefined()
      const name = fileNameFor(meta, got, new Date())
      expect(name).toBe("report.pdf")
      expect(contentTypeFor(meta, got, name)).toBe("application/pdf")
    }))

  it.effect("keeps non-ASCII names and spaces", () =>
    Effect.gen(function*() {
      const got = yield* fetcherFor(root).fetch({ provider: "local", path: path.join(root, "résumé 1.docx") })
      expect(got.fileName).toBe("résumé 1.docx")
      expect(contentTypeFor(meta, got, got.fileName!)).toBe(
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
      )
    }))

  it.effect("`..` that stays inside the root is fine", () =>
    Effect.gen(function*() {
      const got = yield* fetcherFor(root).fetch({ provider: "local", path: `${root}/docs/2026/../2026/report.pdf` })
      expect(got.bytes.length).toBe(PDF.length)
    }))

  it.effect("a symlink that stays inside the root is followed; the name is the one the caller gave", () =>
    Effect.gen(function*() {
      const got = yield* fetcherFor(root).fetch({ provider: "local", path: path.join(root, "alias.pdf") })
      expect(Buffer.from(got.bytes).equals(PDF)).toBe(true)
      expect(got.fileName).toBe("alias.pdf")
    }))

  it.effect("a root configured through a symlink accepts paths under either spelling", () =>
    Effect.gen(function*() {
      const viaLink = fetcherFor(path.join(tmp, "root-link"))
      const a = yield* viaLink.fetch({ provider: "local", path: path.join(tmp, "root-link", "docs", "2026", "report.pdf") })
      const b = yield* viaLink.fetch({ provider: "local", path: path.join(root, "docs", "2026", "report.pdf") })
      expect(a.bytes.length).toBe(PDF.length)
      expect(b.bytes.length).toBe(PDF.length)
    }))

  it.effect("an empty file is zero bytes; a name without extension falls back to octet-stream", () =>
    Effect.gen(function*() {
      const got = yield* fetcherFor(root).fetch({ provider: "local", path: path.join(root, "empty") })
      expect(got.bytes.length).toBe(0)
      expect(contentTypeFor(meta, got, "empty")).toBe("application/octet-stream")
    }))

  it.effect("a file of exactly the cap is read; one byte over is 413", () =>
    Effect.gen(function*() {
      const fetcher = fetcherFor(root)
      expect((yield* fetcher.fetch({ provider: "local", path: path.join(root, "exact.bin") })).bytes.length).toBe(CAP)
      const e = yield* Effect.flip(fetcher.fetch({ provider: "local", path: path.join(root, "big.bin") }))
      expect(e).toBeInstanceOf(PayloadTooLarge)
      expect(e.statusCode).toBe(413)
      expect(e.message).toBe(`fileRef.path: file is ${CAP + 1} bytes, over the ${CAP}-byte ingest limit`)
    }))

  it.effect("a root that does not exist makes the provider unavailable (400)", () =>
    Effect.gen(function*() {
      const e = yield* Effect.flip(
        fetcherFor(path.join(tmp, "nope")).fetch({ provider: "local", path: path.join(tmp, "nope", "x") })
      )
      expect(e._tag).toBe("BadRequest")
      expect(e.message).toMatch(/SVC_LOCAL_INGEST_ROOT cannot be resolved/)
    }))

  it.effect("refuses fields other than provider and path", () =>
    Effect.gen(function*() {
      const e = yield* Effect.flip(
        fetcherFor(root).fetch({ provider: "local", path: path.join(root, "empty"), follow: true })
      )
      expect(e._tag).toBe("BadRequest")
      expect(e.message).toMatch(/^fileRef \(local\): fileRef\.follow: is unexpected/)
      const missing = yield* Effect.flip(fetcherFor(root).fetch({ provider: "local" }))
      expect(missing.message).toMatch(/fileRef\.path: is missing/)
    }))
})
