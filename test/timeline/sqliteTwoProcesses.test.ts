/**
 * Two built processes on one SQLite file (README: "even with two processes on one database
 * file"): six producers post 30 events each through both (their own sources, non-ASCII payloads,
 * a one-record ingest every tenth: the gateway's own events between theirs) while a follower at
 * each process pages by position (limit 4, SVC_EVENTS_PAGE_BYTES=3000) and a stream at one of
 * them follows live (the other process's writes reach it by the poll). Each reads every event
 * once, in the final order.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pathToFileURL } from "node:url"
import { http, type RunningService, startBuilt } from "../support/process.js"
import { ACME_US } from "../support/world.js"
import { openSse } from "../events/sse.js"
import { type BuiltGateway, expectEachOnce, readTimeline, startBuiltGateway, type TimelineEvent, EXAMPLE_FIXTURE } from "./support.js"

const SETTINGS = { SVC_ADMIN_PORT: "off", SVC_EVENTS_POLL_MS: "100", SVC_EVENTS_PAGE_BYTES: "3000" }
const PRODUCERS = 6
const EVENTS = 30

let first: BuiltGateway
let second: RunningService | undefined
beforeAll(async () => {
  first = await startBuiltGateway(SETTINGS, EXAMPLE_FIXTURE)
  second = await startBuilt({ ...SETTINGS, SVC_TENANT_SLUG: "acme", SVC_DATABASE_URL: pathToFileURL(first.dbFile).href })
}, 60_000)
afterAll(async () => {
  await second?.stop()
  await first?.cleanup()
})

describe("two processes on one SQLite file", () => {
  it("concurrent producers through both; a follower at each and a stream read each event once, in the final order", async () => {
    const both = [first, second!]
    const created = await http("POST", `${first.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } })
    expect(created.status).toBe(201)
    const taskId: string = created.body.id
    const sse = await openSse(`${second!.url}/v1/tasks/${taskId}/events/stream`)
    let total = Number.POSITIVE_INFINITY
    try {
      const producers = Array.from({ length: PRODUCERS }, async (_, p) => {
        for (let seq = 1; seq <= EVENTS; seq++) {
          const via = both[(p + seq) % 2]!
          const res = await http("POST", `${via.url}/v1/tasks/${taskId}/events`, { type: "note", source: `producer-${p}`, seq, payload: { text: `承認 ${seq} é`.repeat(p * 8 + 1) } })
          expect(res.status, res.text).toBe(200)
          if (seq % 10 === 0) expect((await http("POST", `${via.url}/v1/tasks/${taskId}/data/ingest`, { events: [{ data: { p, seq } }] })).status).toBe(201)
        }
      })
      const followers = both.map(async (via) => {
        const got: Array<TimelineEvent> = []
        let cursor: string | undefined
        const deadline = Date.now() + 30_000
        while (got.length < total && Date.now() < deadline) {
          const { events } = await readTimeline(via.url, taskId, 4, cursor)
          got.push(...events)
          if (events.length > 0) cursor = events[events.length - 1]!.position
        }
        return got
      })
      const written = await Promise.allSettled(producers)
      for (const r of written) if (r.status === "rejected") throw r.reason
      const final = (await readTimeline(first.url, taskId)).events
      total = final.length
      // The creation's two records (task.created, the first step's task.waiting), then the writes.
      expect(final).toHaveLength(2 + PRODUCERS * EVENTS + PRODUCERS * (EVENTS / 10))
      expectEachOnce(final)
      for (let p = 0; p < PRODUCERS; p++) {
        expect(final.filter((e) => e.source === `producer-${p}`).map((e) => e.seq)).toEqual(Array.from({ length: EVENTS }, (_, i) => i + 1))
      }
      for (const got of await Promise.all(followers)) expect(got.map((e) => e.position)).toEqual(final.map((e) => e.position))
      const streamed: Array<string> = []
      while (streamed.length < final.length) streamed.push((await sse.nextEvent(5000)).id!)
      expect(streamed).toEqual(final.map((e) => e.position))
    } finally {
      total = 0
      sse.close()
    }
  }, 90_000)
})
