/**
 * Registering the same kind://id twice is a 409, not a second agent. On PostgreSQL
 * the check and the insert run in a READ COMMITTED transaction on a pool of connections, so
 * registrations racing each other (two replicas' admin listeners, two `svc agents register`
 * runs) must still leave exactly one agent.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import { EmbeddedWorkspace, makeEmbeddedLayerWithSql } from "../../src/workspace/embedded/layer.js"
import { testDatabase } from "../support/postgres.js"
import { contractFixture, ID } from "./contractFixture.js"

describe("duplicate agent registrations racing on PostgreSQL", () => {
  it.live("exactly one of many concurrent registrations of one kind://id succeeds; the rest are 409", () =>
    Effect.gen(function*() {
      const url = yield* Effect.promise(() => testDatabase("agentdup"))
      const layer = makeEmbeddedLayerWithSql({ url, fixture: contractFixture(), retryInterval: "1 hour" }).pipe(
        Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error"))
      )
      yield* Effect.gen(function*() {
        const ws = yield* EmbeddedWorkspace
        for (let round = 0; round < 5; round++) {
          const ref = `racer-${round}`
          const results = yield* Effect.all(
            Array.from({ length: 8 }, (_, i) =>
              Effect.result(ws.createAgent({ kind: "claude", externalRef: i % 2 === 0 ? ref : `claude://${ref}`, tenantId: ID.tenantA, name: `r${i}` }))),
            { concurrency: "unbounded" }
          )
          const tags = results.map((r) => r._tag === "Success" ? "created" : r.failure._tag)
          expect(tags.filter((t) => t === "created")).toHaveLength(1)
          expect(tags.filter((t) => t !== "created").every((t) => t === "Conflict")).toBe(true)
          const agents = (yield* ws.listAgents(ID.tenantA)).filter((a) => a.externalRef === `claude://${ref}`)
          expect(agents).toHaveLength(1)
        }
      }).pipe(Effect.provide(layer))
    }), 60_000)
})
