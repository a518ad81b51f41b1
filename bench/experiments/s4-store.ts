/**
 * S4 without HTTP: the embedded store's openDocument stream drained in one process, CPU and RSS per
 * 256 MiB download, for the store of this tree or another (a `git archive` of an earlier commit).
 *
 * Usage: tsx bench/experiments/s4-store.ts [tree] [file: url] [documentId]
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
const root = process.argv[2] ?? process.cwd()
const url = process.argv[3] ?? "file:/tmp/s4x/s4.db"
const doc = process.argv[4] ?? "c25c4a9b-ba17-4114-be5a-aac1496585eb"
const { EmbeddedWorkspace, makeEmbeddedLayer } = await import(`${root}/src/workspace/embedded/layer.ts`)
const TENANT = "ded92d4b-f408-46e5-8cce-284491efe71d"
const program = Effect.gen(function*() {
  const ws = yield* EmbeddedWorkspace
  for (let r = 0; r < 4; r++) {
    const c0 = process.cpuUsage(); const t0 = performance.now()
    const { body } = yield* ws.openDocument(TENANT, doc)
    let n = 0
    yield* Stream.runForEach(body, (c: Uint8Array) => Effect.sync(() => { n += c.length }))
    const c = process.cpuUsage(c0)
    console.log(root, n, "cpu ms", ((c.user + c.system) / 1000).toFixed(0), "wall", (performance.now() - t0).toFixed(0), "rss MB", (process.memoryUsage().rss / 1048576).toFixed(0))
  }
}).pipe(Effect.provide(Layer.fresh(makeEmbeddedLayer({ url, retryInterval: "1 hour" }))))
await Effect.runPromise(program as any)
