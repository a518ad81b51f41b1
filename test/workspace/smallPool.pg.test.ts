/**
 * The store on PostgreSQL works with the smallest pools SVC_DB_POOL_SIZE allows: the relay's and
 * the webhook deliveries' LISTEN connections are held besides the pool (src/workspace/embedded/pg.ts),
 * so a pool of 1 or 2 still has a connection for a write. They were taken from it: with 2, both
 * were LISTENing and the first write waited for ever.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import { describe, expect, it } from "vitest"
import { EmbeddedWorkspace, makeEmbeddedLayerWithSql } from "../../src/workspace/embedded/layer.js"
import { exampleFixture } from "../support/gateway.js"
import { testDatabase } from "../support/postgres.js"
import { ACME } from "../support/world.js"

describe("the store on PostgreSQL with a small pool", () => {
  for (const poolSize of [1, 2]) {
    it(`SVC_DB_POOL_SIZE=${poolSize}: writes, lists and pages the timeline (each within 5 s)`, async () => {
      const url = await testDatabase("small-pool")
      await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(
          makeEmbeddedLayerWithSql({ url, fixture: exampleFixture, poolSize }).pipe(
            Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
          )
        )
        const store = Context.get(context, EmbeddedWorkspace)
        const [entity] = yield* store.listEntities(ACME)
        const [task] = yield* store.listTasks(ACME, entity!.id)
        const within = <A, E>(what: string, effect: Effect.Effect<A, E>) =>
          Effect.timeoutOrElse(effect, { duration: "5 seconds", orElse: () => Effect.die(new Error(`${what} waited for a connection`)) })
        // Writes side by side, as requests make them, then the reads that follow them.
        const written = yield* within("appendEvent", Effect.forEach(
          Array.from({ length: 6 }, (_, i) => i),
          (i) => store.appendEvent(ACME, task!.id, { type: "note", source: "pool-test", seq: i, payload: { i } }),
          { concurrency: "unbounded" }
        ))
        expect(written.map((e) => e.seq).sort()).toEqual([0, 1, 2, 3, 4, 5])
        const page = yield* within("listEvents", store.listEvents(ACME, task!.id, { limit: 100, maxBytes: 1024 * 1024 }))
        expect(page.events.filter((e) => e.source === "pool-test")).toHaveLength(6)
        const tasks = yield* within("listTasks", store.listTasks(ACME, entity!.id))
        expect(tasks.length).toBeGreaterThan(0)
      })))
    }, 30_000)
  }
})
