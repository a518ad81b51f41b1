/**
 * A cursor past every position is refused, on PostgreSQL (./eventCursors.ts).
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
import { checkCursorsPastTheEnd } from "./eventCursors.js"

describe("timeline cursors on PostgreSQL", () => {
  it("one of a transaction not yet begun is a BadRequest naming after; any other is read, later events after it", async () => {
    const url = await testDatabase("event-cursors")
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(
        makeEmbeddedLayerWithSql({ url, fixture: exampleFixture }).pipe(
          Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
        )
      )
      yield* checkCursorsPastTheEnd(Context.get(context, EmbeddedWorkspace), Context.get(context, SqlClient.SqlClient), "pg")
    })))
  }, 60_000)
})
