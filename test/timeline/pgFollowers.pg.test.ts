/**
 * Followers on PostgreSQL see every event once, in the store's order, while producers write
 * concurrently through three replicas (built processes): eight producers post 30 events each
 * (their own sources, non-ASCII padding, a one-record ingest every tenth: the gateway's own
 * events between theirs), spread over the replicas; three followers page by position (small
 * limits, each at its own replica) and one follows the SSE stream. Transaction ids are brought
 * just short of a power of ten first, so the writes cross it (999 -> 1000): positions are
 * `<transaction id>-<n>`, and sorting them as text passed events and read others twice.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testDatabase } from "../support/postgres.js"
import { startReplicas, stopReplicas } from "../support/pgReplicas.js"
import { http, type RunningService } from "../support/process.js"
import { ACME_US } from "../support/world.js"
import { openSse } from "../events/sse.js"
import { expectEachOnce, nearPowerOfTen, readTimeline, type TimelineEvent } from "./support.js"

const PRODUCERS = 8
const EVENTS = 30

let db: string
const replicas: Array<RunningService> = []
beforeAll(async () => {
  db = await testDatabase("timeline_followers")
  replicas.push(...await startReplicas(db, 3, { SVC_ADMIN_PORT: "off", SVC_DB_POOL_SIZE: "8", SVC_EVENTS_POLL_MS: "100" }))
}, 90_000)
afterAll(() => stopReplicas(replicas))

describe("followers on three PostgreSQL replicas", () => {
  it("concurrent producers; paging followers and a stream read each event once, in the final order", async () => {
    const created = await http("POST", `${replicas[0]!.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } })
    expect(created.status).toBe(201)
    const taskId: string = created.body.id
    const boundary = await nearPowerOfTen(db, 60)
    const sse = await openSse(`${replicas[2]!.url}/v1/tasks/${taskId}/events/stream`)
    // Each follower reads on until it has as many events as the whole timeline (known once writes end).
    let total = Number.POSITIVE_INFINITY
    try {
      const failures: Array<unknown> = []
      const producers = Array.from({ length: PRODUCERS }, (_, p) =>
        (async () => {
          for (let seq = 1; seq <= EVENTS; seq++) {
            const via = replicas[(p + seq) % 3]!
            const res = await http("POST", `${via.url}/v1/tasks/${taskId}/events`, {
              type: "note",
              source: `producer-${p}`,
              seq,
              payload: { p, seq, pad: "é承".repeat(p * 5) }
            })
            expect(res.status, res.text).toBe(200)
            if (seq % 10 === 0) {
              const ingest = await http("POST", `${via.url}/v1/tasks/${taskId}/data/ingest`, { kind: "tick", events: [{ data: { p, seq } }] })
              expect(ingest.status, ingest.text).toBe(201)
            }
          }
        })().catch((error) => void failures.push(error)))
      const followers = [0, 1, 2].map((r) =>
        (async () => {
          const got: Array<TimelineEvent> = []
          let cursor: string | undefined
          const deadline = Date.now() + 60_000
          while (got.length < total && Date.now() < deadline) {
            const { events } = await readTimeline(replicas[r]!.url, taskId, 5 + r, cursor)
            got.push(...events)
            if (events.length > 0) cursor = events[events.length - 1]!.position
            else await new Promise((resolve) => setTimeout(resolve, 20))
          }
          return got
        })().catch((error) => {
          failures.push(error)
          return []
        }))
      await Promise.all(producers)
      if (failures.length > 0) throw failures[0]
      // The creation's two records (task.created, the first step's task.waiting), then the writes.
      const expected = 2 + PRODUCERS * EVENTS + PRODUCERS * (EVENTS / 10)
      // Every write is acknowledged; a reader sees it once no older transaction runs.
      let final: ReadonlyArray<TimelineEvent> = []
      for (const deadline = Date.now() + 10_000; final.length < expected && Date.now() < deadline;) {
        final = (await readTimeline(replicas[0]!.url, taskId)).events
      }
      expect(final).toHaveLength(expected)
      expectEachOnce(final)
      total = final.length
      const followed = await Promise.all(followers)
      if (failures.length > 0) throw failures[0]
      // The writes crossed the power of ten.
      const txs = final.map((e) => Number(e.position.split("-")[0]))
      expect(Math.min(...txs)).toBeLessThan(boundary)
      expect(Math.max(...txs)).toBeGreaterThanOrEqual(boundary)
      for (let p = 0; p < PRODUCERS; p++) {
        expect(final.filter((e) => e.source === `producer-${p}`).map((e) => e.seq)).toEqual(Array.from({ length: EVENTS }, (_, i) => i + 1))
      }
      // A paged read at another replica agrees.
      expect((await readTimeline(replicas[1]!.url, taskId, 50)).events.map((e) => e.position)).toEqual(final.map((e) => e.position))
      for (const got of followed) expect(got.map((e) => e.position)).toEqual(final.map((e) => e.position))
      const streamed: Array<string> = []
      while (streamed.length < final.length) streamed.push((await sse.nextEvent(10_000)).id!)
      expect(streamed).toEqual(final.map((e) => e.position))
    } finally {
      // A failed test stops its followers before the replicas stop.
      total = 0
      sse.close()
    }
  }, 120_000)
})
