/**
 * The documents directory is made when a write finds it missing (not by a mkdir before every
 * write): the first write into a fresh path, and a write after the directory was removed, both
 * store the file (a write that fails otherwise: test/files/documentFiles.process.test.ts).
 */
import { describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeDocumentFiles } from "../../src/workspace/embedded/DocumentFiles.js"

const readAll = (files: ReturnType<typeof makeDocumentFiles>, id: string, size: number) =>
  Effect.runPromise(Effect.flatMap(files.open(id, size), (s) => Stream.runCollect(s))).then((chunks) => Buffer.concat([...chunks]))

describe("the documents directory", () => {
  it("is made by the write that finds it missing, first and after it was removed", async () => {
    const root = mkdtempSync(join(tmpdir(), "docfiles-"))
    try {
      const dir = join(root, "db.sqlite.documents")
      const files = makeDocumentFiles(dir)
      const first = randomUUID()
      const bytes = Buffer.from("first document")
      await Effect.runPromise(files.write(first, bytes))
      expect(statSync(dir).mode & 0o777).toBe(0o700)
      expect(await readAll(files, first, bytes.length)).toEqual(bytes)
      rmSync(dir, { recursive: true })
      const second = randomUUID()
      await Effect.runPromise(files.write(second, Buffer.from("second")))
      expect(await readAll(files, second, 6)).toEqual(Buffer.from("second"))
      expect(readdirSync(dir)).toEqual([second])
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})
