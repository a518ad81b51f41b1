/**
 * The embedded store's timeline pages on PostgreSQL (the same queries as on SQLite, on xid8
 * transactions), against the events read one by one (./eventPages.ts).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as SqlClient from "effect/sql/SqlClient"
import { describe, it } from "vitest"
import { EmbeddedWorkspace, makeEmbeddedLayerWithSql } from "../../src/workspace/embedded/layer.js"
import { exampleFixture } from "../support/gateway.js"
import { testDatabase } from "../support/postgres.js"
import { checkEventPages } from "./eventPages.js"

describe("the timeline's pages on PostgreSQL", () => {
  it("are the events read one by one, paged by the rules, for generated events and every kind of page", async () => {
    const url = await testDatabase("event-pages")
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(
        makeEmbeddedLayerWithSql({ url, fixture: exampleFixture }).pipe(
          Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
        )
      )
      yield* checkEventPages(Context.get(context, EmbeddedWorkspace), Context.get(context, SqlClient.SqlClient), { nul: false })
    })))
  }, 60_000)
})
