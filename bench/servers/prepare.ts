/**
 * Prepares an embedded workspace database for the benchmark: migrations, the bench fixture and,
 * with a document file, that file stored as a document of the bench task (S4 downloads it).
 * Prints `{"documentId": ...}` on its last line.
 *
 * Usage: tsx bench/servers/prepare.ts <file: url> <fixture.json> [document file]
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { readFileSync } from "node:fs"
import { EmbeddedWorkspace, makeEmbeddedLayer } from "../../src/workspace/embedded/layer.js"
import { parseFixture } from "../../src/domain/fixture.js"
import { BENCH_TASK_ID, TENANT_ID } from "../lib/fixture.js"

const [url, fixtureFile, documentFile] = process.argv.slice(2)
if (url === undefined || fixtureFile === undefined) throw new Error("usage: prepare.ts <file: url> <fixture.json> [document file]")

const program = Effect.gen(function*() {
  const fixture = yield* parseFixture(fixtureFile, JSON.parse(readFileSync(fixtureFile, "utf8")))
  return yield* Effect.gen(function*() {
    if (documentFile === undefined) return null
    const store = yield* EmbeddedWorkspace
    const doc = yield* store.putDocument(TENANT_ID, {
      taskId: BENCH_TASK_ID,
      source: "bench",
      filename: "bench-256MiB.bin",
      contentType: "application/octet-stream",
      bytes: readFileSync(documentFile)
    }, Option.none())
    return doc.id
  }).pipe(Effect.provide(Layer.fresh(makeEmbeddedLayer({ url, fixture, retryInterval: "1 hour" }))))
})

Effect.runPromise(program).then(
  (documentId) => console.log(JSON.stringify({ documentId })),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
