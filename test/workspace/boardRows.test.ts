/**
 * On SQLite task lists and boards read their rows as one JSON array SQLite makes (src/workspace/embedded/
 * tasks.ts `listTaskRows`), not row by row: the same tasks, in the same order, with the same text,
 * as read row by row and selected by the query's rules here, for generated titles in any script
 * (emoji, combining marks, quotes, backslashes, control characters) and every kind of query.
 */
import * as Effect from "effect/Effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { exampleFixture } from "../support/gateway.js"
import { embeddedStore } from "../support/storeWorkspace.js"
import { ACME, ACME_US } from "../support/world.js"

// The API refuses NUL (src/http/input/jsonInput.ts), but a fixture (SVC_SEED_FILE) can store one:
// the driver reads a cell up to it, and so must the list.
const text = fc.string({ unit: "grapheme", maxLength: 40 }).filter((s) => !s.includes("\u0000"))
const oddText = fc.oneof(
  text,
  fc.constantFrom("\"", "\\", "\\u0041", "</script>", "\u2028\u2029", "\u0001\u001f\u007f", "a\r\nb", "🏳️‍🌈", "e\u0301", "NUL\u0000after", "\u0000", "日本\u0000語")
)
const task = fc.record({
  title: oddText,
  status: fc.constantFrom("IN_PROGRESS", "COMPLETED", "FAILED", "PENDING"),
  priority: fc.constantFrom("low", "normal", "high", "1", "0.5", "hi\u0000gh"),
  step: fc.option(fc.constantFrom("review", "upload", "approve"), { nil: null }),
  snapshot: oddText
})

describe("task lists' and boards' rows on SQLite", () => {
  it("are the rows read one by one, for generated tasks and every kind of query", async () => {
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const store = yield* embeddedStore(exampleFixture)
      const sql = store.sql
      const [workflow] = yield* sql<{ readonly workflow_id: string }>`SELECT workflow_id FROM tasks WHERE entity_id = ${ACME_US} LIMIT 1`
      const samples = fc.sample(fc.array(task, { minLength: 1, maxLength: 30 }), { numRuns: 25, seed: 20261205 })
      let round = 0
      for (const tasks of samples) {
        round++
        yield* sql`DELETE FROM tasks WHERE entity_id = ${ACME_US} AND id LIKE 'gen-%'`
        for (const [i, t] of tasks.entries()) {
          yield* sql`INSERT INTO tasks (id, tenant_id, entity_id, workflow_id, title, status, priority, created_at, current_step, snapshots)
            VALUES (${`gen-${round}-${i}`}, ${ACME}, ${ACME_US}, ${workflow!.workflow_id}, ${t.title}, ${t.status}, ${t.priority},
              ${new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString()}, ${t.step}, ${JSON.stringify({ [t.snapshot]: { note: t.snapshot } })})`
        }
        // Row by row, as the driver reads them, and selected here by the query's rules.
        const rows = yield* sql<Record<string, string>>`SELECT rowid, * FROM tasks WHERE tenant_id = ${ACME} AND entity_id = ${ACME_US} ORDER BY rowid`
        const all = rows.map((r) => ({
          id: r.id, tenantId: r.tenant_id, entityId: r.entity_id, workflowId: r.workflow_id, title: r.title,
          status: r.status, priority: r.priority, createdAt: r.created_at, currentStep: (r.current_step ?? null) as string | null
        }))
        type Query = { status?: string; limit?: number; afterId?: string; currentSteps?: Array<{ workflowId: string; stepId: string }> }
        const select = (q: Query | undefined) => {
          let found = all
          if (q?.status !== undefined) found = found.filter((t) => t.status === q.status)
          if (q?.currentSteps !== undefined) found = found.filter((t) => q.currentSteps!.some((c) => c.workflowId === t.workflowId && c.stepId === t.currentStep))
          if (q?.afterId !== undefined) found = found.filter((t) => all.findIndex((a) => a.id === t.id) > all.findIndex((a) => a.id === q.afterId))
          return q?.limit !== undefined ? found.slice(0, q.limit) : found
        }
        const queries: Array<Query | undefined> = [
          undefined,
          { status: "IN_PROGRESS" },
          { limit: 1 },
          { limit: 7, status: "COMPLETED" },
          { afterId: all[Math.floor(all.length / 2)]!.id },
          { afterId: all[0]!.id, limit: 3 },
          { currentSteps: [{ workflowId: workflow!.workflow_id, stepId: "review" }, { workflowId: workflow!.workflow_id, stepId: "upload" }] },
          { currentSteps: [] }
        ]
        for (const query of queries) {
          const listed = yield* store.listTasks(ACME, ACME_US, query)
          expect(listed, JSON.stringify(query)).toEqual(select(query))
          const board = yield* store.listTaskBoard!(ACME, ACME_US, query)
          expect(board.map(({ awaiting: _, ...t }) => t), JSON.stringify(query)).toEqual(listed)
        }
      }
    })))
  }, 60_000)
})
