/**
 * A cursor past every position is refused, on SQLite (./eventCursors.ts).
 */
import * as Effect from "effect/Effect"
import { describe, it } from "vitest"
import { exampleFixture } from "../support/gateway.js"
import { embeddedStore } from "../support/storeWorkspace.js"
import { checkCursorsPastTheEnd } from "./eventCursors.js"

describe("timeline cursors on SQLite", () => {
  it("one past every position the store has given out is a BadRequest naming after; any other is read, later events after it", async () => {
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const store = yield* embeddedStore(exampleFixture)
      yield* checkCursorsPastTheEnd(store, store.sql, "sqlite")
    })))
  }, 60_000)
})
