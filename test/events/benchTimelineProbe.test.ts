/**
 * The bench's S7 timeline probe (bench/lib/timeline.ts) against the built process: a timeline
 * beyond the answer budget (SVC_EVENTS_PAGE_BYTES) comes in several answers, so
 * counting the default answer's events (the probe before) reports a truncated timeline that is
 * not one (`npm run bench`: "4133 items instead of 10000"); following nextAfter reaches every event.
 */
import { afterAll, describe, expect, it } from "vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { countWholeTimeline } from "../../bench/lib/timeline.js"
import { http, type RunningService, startBuilt } from "../support/process.js"

/** Demo task with events 1..3 seeded. */
const TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"
const PAGE_BYTES = 16 * 1024

const dirs: Array<string> = []
const services: Array<RunningService> = []
afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()))
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

describe("bench S7 timeline probe (built process)", () => {
  it("counts every event of a timeline longer than one answer, and refuses answers that break the paging rules", async () => {
    const dir = mkdtempSync(join(tmpdir(), "events-probe-"))
    dirs.push(dir)
    const gw = await startBuilt({
      SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`,
      SVC_ADMIN_PORT: "off",
      SVC_EVENTS_PAGE_BYTES: String(PAGE_BYTES)
    })
    services.push(gw)
    for (let seq = 10; seq < 210; seq++) {
      const res = await http("POST", `${gw.url}/v1/tasks/${TASK}/events`, {
        type: "reasoning.delta",
        source: "worker",
        seq,
        payload: { text: `step ${seq} of the agent's reasoning, about sixty bytes long` }
      })
      expect(res.status).toBe(200)
    }
    const total = 3 + 200

    const path = `${gw.url}/v1/tasks/${TASK}/events`
    const first = await http("GET", path)
    expect(first.status).toBe(200)
    // The default answer stops at the budget: its events alone are not the timeline.
    expect(first.body.events.length).toBeLessThan(total)
    expect(first.body).toMatchObject({ hasMore: true, nextAfter: first.body.events.at(-1).position })

    let reads = 0
    const readAfter = (after: string) => {
      reads++
      return fetch(`${path}?after=${after}`)
    }
    expect(await countWholeTimeline(first.body, readAfter)).toBe(total)
    expect(reads).toBeGreaterThan(1)

    // Answers that lose events are caught, not counted.
    const { hasMore: _h, nextAfter: _n, ...cut } = first.body
    expect(Object.keys(cut)).toEqual(["events"])
    expect(await countWholeTimeline({ ...cut, hasMore: true }, readAfter)).toBe(-1)
    // A nextAfter that is not the answer's last position (the one before it) would skip or repeat events.
    expect(await countWholeTimeline({ ...first.body, nextAfter: first.body.events.at(-2).position }, readAfter)).toBe(-1)
    // Positions are opaque (their order is the store's, not the client's to check): an event that
    // comes twice is what a broken cursor shows.
    expect(await countWholeTimeline({ events: [...first.body.events, first.body.events[0]] }, readAfter)).toBe(-1)
    expect(await countWholeTimeline({ events: [{ ...first.body.events[0], position: undefined }] }, readAfter)).toBe(-1)
    const beyond = "999999999"
    expect(await countWholeTimeline({ ...first.body, nextAfter: beyond, events: [...first.body.events, { position: beyond }] }, (a) => fetch(`${path}x?after=${a}`))).toBe(-1)
  }, 60_000)
})
