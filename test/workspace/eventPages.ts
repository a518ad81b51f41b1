/**
 * The embedded store's timeline pages (src/workspace/embedded/events.ts: a cursor, a limit and a
 * byte budget the store cuts by, from sizes it reads first) are the events read one by one here and paged by those
 * rules (src/api/eventPaging.ts), for generated events with text in any script, numbers and every
 * origin; on SQLite also NULs (PostgreSQL's text holds none). Shared by the SQLite and the
 * PostgreSQL test.
 */
import type * as SqlClient from "effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import fc from "fast-check"
import { isDeepStrictEqual } from "node:util"
import { expect } from "vitest"
import { EVENT_SIZE_OVERHEAD, eventsWithinBytes, timelinePage } from "../../src/api/eventPaging.js"
import type { WorkspaceClientService } from "../../src/upstream/WorkspaceClient.js"
import { EVENT_COLUMNS, type EventRow, eventOfRow } from "../../src/workspace/embedded/db.js"
import { settledEvents } from "../../src/workspace/embedded/timeline.js"
import { ACME } from "../support/world.js"

const events = (nul: boolean) => {
  const text = fc.string({ unit: "grapheme", maxLength: 30 }).filter((s) => !s.includes("\u0000"))
  const odd = ["\"", "\\", "\\u0041", "</script>", "\u2028\u2029", "\u0001\u001f\u007f", "a\r\nb", "🏳️‍🌈", "e\u0301"]
  const oddText = fc.oneof(text, fc.constantFrom(...odd, ...(nul ? ["NUL\u0000after", "日本\u0000語"] : [])))
  const payload = fc.oneof(
    fc.dictionary(text, fc.oneof(oddText, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null)), { maxKeys: 5 }),
    fc.constantFrom({ big: 9007199254740993 }, { nested: { a: [1, "x", { b: null }] } }, {}, { long: "x".repeat(3_000) })
  )
  return fc.array(fc.record({
    origin: fc.constantFrom("producer", "agent", "gateway"),
    type: oddText,
    source: oddText,
    sourceLabel: fc.option(oddText, { nil: null }),
    groupKey: fc.option(oddText, { nil: null }),
    payload
  }), { minLength: 0, maxLength: 40 })
}

type Page = { after?: string; limit?: number; maxBytes?: number }

/** Until all `count` events of the task are settled (at most 20 s; then the comparison says what is missing). */
const waitSettled = (sql: SqlClient.SqlClient, taskId: string, count: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 400; i++) {
      const [row] = yield* sql<{ readonly n: number | string }>`SELECT COUNT(*) AS n FROM events WHERE task_id = ${taskId} ${settledEvents(sql)}`
      if (Number(row!.n) >= count) return
      yield* Effect.sleep("50 millis")
    }
  })

/** Every kind of page of 25 generated timelines, against the rules applied to the rows read one by one. */
export const checkEventPages = (
  store: Pick<WorkspaceClientService, "listEvents">,
  sql: SqlClient.SqlClient,
  options: { readonly nul: boolean }
) =>
  Effect.gen(function*() {
    const [task] = yield* sql<{ readonly id: string }>`SELECT id FROM tasks WHERE tenant_id = ${ACME} ORDER BY id LIMIT 1`
    const taskId = task!.id
    const samples = fc.sample(events(options.nul), { numRuns: 25, seed: 20261205 })
    for (const generated of samples) {
      yield* sql`DELETE FROM events WHERE task_id = ${taskId}`
      for (const [i, e] of generated.entries()) {
        yield* sql`INSERT INTO events (task_id, seq, origin, tenant_id, root_task_id, type, source, source_label, payload, group_key, created_at)
          VALUES (${taskId}, ${e.origin === "gateway" ? null : i}, ${e.origin}, ${ACME}, ${taskId}, ${e.type}, ${e.source}, ${e.sourceLabel},
            ${JSON.stringify(e.payload)}, ${e.groupKey}, ${new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString()})`
      }
      // On PostgreSQL a reader takes only settled rows (the store's rule: none of a transaction
      // that may still be writing the timeline): wait for them, as a follower would, before comparing.
      yield* waitSettled(sql, taskId, generated.length)
      // Row by row, as the driver reads them; paged here by the rules.
      const rows = yield* sql<EventRow>`SELECT ${sql.unsafe(EVENT_COLUMNS)} FROM events WHERE task_id = ${taskId} ORDER BY tx, position`
      const sizes = (yield* sql<{ readonly n: number }>`SELECT octet_length(payload) + octet_length(type) + octet_length(source) +
        COALESCE(octet_length(source_label), 0) + COALESCE(octet_length(group_key), 0) + octet_length(task_id) AS n
        FROM events WHERE task_id = ${taskId} ORDER BY tx, position`).map((s) => EVENT_SIZE_OVERHEAD + Number(s.n))
      const all = rows.map(eventOfRow)
      const expected = (page: Page) => {
        const from = page.after === undefined ? 0 : all.findIndex((e) => e.position === page.after) + 1
        const rest = all.slice(from)
        const wanted = page.limit === undefined ? rest.length : Math.min(page.limit, rest.length)
        if (page.maxBytes === undefined) return timelinePage(rest.slice(0, wanted), rest.length > wanted)
        const n = eventsWithinBytes(sizes.slice(from, from + wanted), page.maxBytes)
        const asked = page.limit === undefined ? rest.length : Math.min(page.limit + 1, rest.length)
        return n === 0 ? timelinePage([], false) : timelinePage(rest.slice(0, n), asked > n)
      }
      const middle = all[Math.floor(all.length / 2)]?.position
      // Budgets on an event's edge: the total of the first two exactly (the third is not taken), one more.
      const edge = sizes.length >= 3 ? sizes[0]! + sizes[1]! : undefined
      const pages: Array<Page> = [
        {},
        { limit: 1 },
        { limit: 7 },
        { maxBytes: 1 },
        { maxBytes: 2_000 },
        { maxBytes: 6_000, limit: 4 },
        ...(edge === undefined ? [] : [{ maxBytes: edge }, { maxBytes: edge + 1 }, { maxBytes: edge, limit: 2 }, { maxBytes: edge + 1, limit: 2 }]),
        ...(middle === undefined ? [] : [
          { after: middle },
          { after: middle, limit: 3 },
          { after: middle, maxBytes: 1_500 },
          { after: middle, limit: 1, maxBytes: 1 },
          { after: all.at(-1)!.position, maxBytes: 1_000 }
        ])
      ]
      for (const page of pages) {
        // A short page now and then on PostgreSQL: a transaction of another test on the same server
        // that ends between a read's snapshot and its look at the locks is taken as still running
        // (the settled rule errs that way, so no writer's rows are ever skipped), and the rows after
        // it wait for the next read. A follower reads again; so does this, a few times, before it
        // says the page is wrong.
        let listed = yield* store.listEvents(ACME, taskId, page)
        for (let i = 0; i < 20 && !isDeepStrictEqual(listed, expected(page)); i++) {
          yield* Effect.sleep("50 millis")
          listed = yield* store.listEvents(ACME, taskId, page)
        }
        expect(listed, JSON.stringify(page)).toEqual(expected(page))
      }
    }
  })
