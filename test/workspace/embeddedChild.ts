/**
 * A separate process for embedded.test.ts: opens the embedded store on a database file
 * (seeding the demo when it is empty) and writes to it, so two of them contend for the file
 * as two gateway processes would. Usage: tsx embeddedChild.ts <url> <writes> <seqBase>
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as References from "effect/References"
import { EmbeddedWorkspace, makeEmbeddedLayer } from "../../src/workspace/embedded/layer.js"

const [url, writes, seqBase] = process.argv.slice(2) as [string, string, string]
const ACME = "ded92d4b-f408-46e5-8cce-284491efe71d"
const TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"

const program = Effect.gen(function*() {
  const ws = yield* EmbeddedWorkspace
  for (let i = 0; i < Number(writes); i++) {
    yield* i % 2 === 0
      // A worker's own stream (a child id): the ingests' audit events go on the root task's.
      ? ws.appendEvent(ACME, `${TASK}:worker:child`, { type: "t", source: "child", seq: Number(seqBase) + i, payload: { i } })
      : ws.ingestData(ACME, { taskId: TASK, rows: [{ data: { i } }] }, Option.some({ taskId: TASK, name: "records_ready" }))
  }
}).pipe(Effect.provide(makeEmbeddedLayer({ url, retryInterval: "1 hour" })), Effect.provideService(References.MinimumLogLevel, "Warn"))

Effect.runPromise(program).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
