/**
 * The embedded store's timeline pages on SQLite, against the events read one by one
 * (./eventPages.ts; text with NULs too).
 */
import * as Effect from "effect/Effect"
import { describe, it } from "vitest"
import { exampleFixture } from "../support/gateway.js"
import { embeddedStore } from "../support/storeWorkspace.js"
import { checkEventPages } from "./eventPages.js"

describe("the timeline's pages", () => {
  it("are the events read one by one, paged by the rules, for generated events and every kind of page", async () => {
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const store = yield* embeddedStore(exampleFixture)
      yield* checkEventPages(store, store.sql, { nul: true })
    })))
  }, 60_000)
})
