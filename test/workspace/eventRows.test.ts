/**
 * The embedded store's timeline pages (src/workspace/embedded/events.ts: a cursor, a limit and a
 * byte budget the store alone cuts by, from sizes it reads first) are the events read one by one
 * here and paged by those rules, for generated events with text in any script, NULs, numbers and
 * every origin.
 */
import * as Effect from "effect/Effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { EVENT_SIZE_OVERHEAD, eventsWithinBytes, timelinePage } from "../../src/api/eventPaging.js"
import { EVENT_COLUMNS, type EventRow, eventOfRow } from "../../src/workspace/embedded/db.js"
import { exampleFixture } from "../support/gateway.js"
import { embeddedStore } from "../support/storeWorkspace.js"
import { ACME } from "../support/world.js"

const text = fc.string({ unit: "grapheme", maxLength: 30 }).filter((s) => !s.includes("\u0000"))
const oddText = fc.oneof(
  text,
  fc.constantFrom("\"", "\\", "\\u0041", "</script>", "\u2028\u2029", "\u0001\u001f\u007f", "a\r\nb", "🏳️‍🌈", "e\u0301", "NUL\u0000after", "日本\u0000語")
)
const payload = fc.oneof(
  fc.dictionary(text, fc.oneof(oddText, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null)), { maxKeys: 5 }),
  fc.constantFrom({ big: 9007199254740993 }, { nested: { a: [1, "x", { b: null }] } }, {}, { long: "x".repeat(3_000) })
)
const event = fc.record({
  origin: fc.constantFrom("producer", "agent", "gateway"),
  type: oddText,
  source: oddText,
  sourceLabel: fc.option(oddText, { nil: null }),
  groupKey: fc.option(oddText, { nil: null }),
  payload
})

describe("the timeline's pages", () => {
  it("are the events read one by one, paged by the rules, for generated events and every kind of page", async () => {
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const store = yield* embeddedStore(exampleFixture)
      const sql = store.sql
      const [task] = yield* sql<{ readonly id: string }>`SELECT id FROM tasks WHERE tenant_id = ${ACME} LIMIT 1`
      const taskId = task!.id
      const samples = fc.sample(fc.array(event, { minLength: 0, maxLength: 40 }), { numRuns: 25, seed: 20261205 })
      for (const events of samples) {
        yield* sql`DELETE FROM events WHERE task_id = ${taskId}`
        for (const [i, e] of events.entries()) {
          yield* sql`INSERT INTO events (task_id, seq, origin, tenant_id, root_task_id, type, source, source_label, payload, group_key, created_at)
            VALUES (${taskId}, ${e.origin === "gateway" ? null : i}, ${e.origin}, ${ACME}, ${taskId}, ${e.type}, ${e.source}, ${e.sourceLabel},
              ${JSON.stringify(e.payload)}, ${e.groupKey}, ${new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString()})`
        }
        // Row by row, as the driver reads them; paged here by the rules.
        const rows = yield* sql<EventRow>`SELECT ${sql.unsafe(EVENT_COLUMNS)} FROM events WHERE task_id = ${taskId} ORDER BY tx, position`
        const sizes = yield* sql<{ readonly n: number }>`SELECT octet_length(payload) + octet_length(type) + octet_length(source) +
          COALESCE(octet_length(source_label), 0) + COALESCE(octet_length(group_key), 0) + octet_length(task_id) AS n
          FROM events WHERE task_id = ${taskId} ORDER BY tx, position`
        const all = rows.map(eventOfRow)
        type Page = { after?: string; limit?: number; maxBytes?: number }
        const expected = (page: Page) => {
          const from = page.after === undefined ? 0 : all.findIndex((e) => e.position === page.after) + 1
          const rest = all.slice(from)
          const wanted = page.limit === undefined ? rest.length : Math.min(page.limit, rest.length)
          if (page.maxBytes === undefined) return timelinePage(rest.slice(0, wanted), rest.length > wanted)
          const n = eventsWithinBytes(sizes.slice(from, from + wanted).map((s) => EVENT_SIZE_OVERHEAD + Number(s.n)), page.maxBytes)
          const asked = page.limit === undefined ? rest.length : Math.min(page.limit + 1, rest.length)
          return n === 0 ? timelinePage([], false) : timelinePage(rest.slice(0, n), asked > n)
        }
        const middle = all[Math.floor(all.length / 2)]?.position
        const pages: Array<Page> = [
          {},
          { limit: 1 },
          { limit: 7 },
          { maxBytes: 1 },
          { maxBytes: 2_000 },
          { maxBytes: 6_000, limit: 4 },
          ...(middle === undefined ? [] : [{ after: middle }, { after: middle, limit: 3 }, { after: middle, maxBytes: 1_500 }])
        ]
        for (const page of pages) {
          const listed = yield* store.listEvents(ACME, taskId, page)
          expect(listed, JSON.stringify(page)).toEqual(expected(page))
        }
      }
    })))
  }, 60_000)
})
