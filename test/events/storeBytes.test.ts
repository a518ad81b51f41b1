/**
 * `maxBytes` paging in the embedded store: the same cut as
 * src/api/eventPaging.ts's eventsWithinBytes, measured without reading the payloads whole.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as References from "effect/References"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EVENT_SIZE_OVERHEAD, eventSize, eventsWithinBytes } from "../../src/api/eventPaging.js"
import type { TaskEvent } from "../../src/api/resources.js"
import type { WorkspaceClientService } from "../../src/upstream/WorkspaceClient.js"
import { EmbeddedWorkspace, makeEmbeddedLayerWithSql } from "../../src/workspace/embedded/layer.js"

const ACME = "ded92d4b-f408-46e5-8cce-284491efe71d"
/** No events in the demo. */
const TASK = "1f3a5c7e-9b2d-4f60-8a1c-3e5b7d9f1a20"

const tempDirs: Array<string> = []
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

type Run = <A, E>(f: (ws: WorkspaceClientService) => Effect.Effect<A, E>) => Effect.Effect<A, unknown>
const embedded: Run = (f) => {
  const dir = mkdtempSync(join(tmpdir(), "store-bytes-"))
  tempDirs.push(dir)
  return Effect.flatMap(EmbeddedWorkspace, f).pipe(
    Effect.provide(makeEmbeddedLayerWithSql({ url: `file:${join(dir, "workspace.db")}`, retryInterval: "1 hour" })),
    Effect.provideService(References.MinimumLogLevel, "None")
  )
}

describe("eventsWithinBytes", () => {
  it("takes events while the total is under the budget: the last may pass it, the first always comes", () => {
    expect(eventsWithinBytes([], 10)).toBe(0)
    expect(eventsWithinBytes([50], 10)).toBe(1)
    expect(eventsWithinBytes([4, 4, 4, 4], 10)).toBe(3)
    expect(eventsWithinBytes([4, 6, 4], 10)).toBe(2)
    expect(eventsWithinBytes([1, 100, 1], 10)).toBe(2)
    expect(eventsWithinBytes([1, 1], 10)).toBe(2)
  })
})

for (const [name, run] of [["embedded store", embedded]] as const) {
  describe(`listEvents maxBytes: ${name}`, () => {
    it.live("cuts where eventsWithinBytes says, after a position and within limit, and says whether more follows", () =>
      run((ws) =>
        Effect.gen(function*() {
          const lengths = [100, 5000, 200, 300, 9000, 10, 10, 10]
          const events: Array<TaskEvent> = []
          for (const [i, n] of lengths.entries()) {
            events.push(yield* ws.appendEvent(ACME, TASK, { type: "note", source: "worker", seq: i + 1, payload: { t: "y".repeat(n) } }))
          }
          const sizes = events.map(eventSize)
          expect(sizes[0]).toBeGreaterThan(EVENT_SIZE_OVERHEAD)
          /** The position of the event of this seq. */
          const at = (seq: number) => events[seq - 1]!.position
          const seqs = (page: { after?: string; limit?: number; maxBytes?: number }) =>
            Effect.map(ws.listEvents(ACME, TASK, page), (p) => p.events.map((e) => e.seq))
          const page = (p: { after?: string; limit?: number; maxBytes?: number }) =>
            Effect.map(ws.listEvents(ACME, TASK, p), ({ events, ...rest }) => ({ seqs: events.map((e) => e.seq), ...rest }))
          for (const budget of [1, 500, 5400, 6000, 20_000]) {
            const n = eventsWithinBytes(sizes, budget)
            expect(yield* page({ maxBytes: budget })).toEqual({
              seqs: events.slice(0, n).map((e) => e.seq),
              ...(n < events.length ? { hasMore: true, nextAfter: events[n - 1]!.position } : {})
            })
          }
          expect(yield* page({ after: at(2), maxBytes: 600 })).toEqual({ seqs: [3, 4], hasMore: true, nextAfter: at(4) })
          expect(yield* seqs({ after: at(4), maxBytes: 1 })).toEqual([5])
          expect(yield* page({ after: at(5), limit: 2, maxBytes: 100_000 })).toEqual({ seqs: [6, 7], hasMore: true, nextAfter: at(7) })
          expect(yield* page({ after: at(5), limit: 3, maxBytes: 100_000 })).toEqual({ seqs: [6, 7, 8] })
          expect(yield* page({ after: at(8), maxBytes: 1 })).toEqual({ seqs: [] })
        })))
  })
}
