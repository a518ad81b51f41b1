/**
 * Cursors on the built process (SQLite): a position is one the store gave out, or before one. A
 * value past every position it has given out (a PostgreSQL-style `<tx>-<n>`, where SQLite's are
 * plain digits; a number past the last) would make a page empty and a stream silent with every
 * later event behind it: it is a 400 naming the parameter (`after`, or the `last-event-id`
 * header), on a page and on a stream alike. Any other is read, and events written after it come.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { ACME_US } from "../support/world.js"
import { openSse } from "../events/sse.js"
import { type BuiltGateway, startBuiltGateway, EXAMPLE_FIXTURE } from "./support.js"


let gw: BuiltGateway
beforeAll(async () => {
  gw = await startBuiltGateway({ SVC_ADMIN_PORT: "off", SVC_EVENTS_POLL_MS: "200" }, EXAMPLE_FIXTURE)
}, 60_000)
afterAll(async () => {
  await gw?.cleanup()
})

const note = (seq: number) => ({ type: "note", source: "worker", seq, payload: { seq } })

const newTask = async () => {
  const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } })
  expect(created.status, created.text).toBe(201)
  return `${gw.url}/v1/tasks/${created.body.id as string}/events`
}

describe("timeline cursors (built process, SQLite)", () => {
  it("one past every position the store has given out: a 400 naming after or last-event-id, page and stream alike", async () => {
    const events = await newTask()
    const posted = await http("POST", events, note(1))
    expect(posted.status, posted.text).toBe(200)
    const last: string = posted.body.event.position
    expect(last).toMatch(/^\d+$/)
    for (const after of ["1-0", "1-2", "99-0", "0000000000000000001-0", "9999999999999999999-9007199254740991", `${last}-0`, String(Number(last) + 1000), "9007199254740991"]) {
      const page = await http("GET", `${events}?after=${after}`)
      expect(page.status, `after=${after}: ${page.text}`).toBe(400)
      expect(page.body).toEqual({ statusCode: 400, error: "Bad Request", message: expect.stringMatching(/^after: .*past every position/) })
      const limited = await http("GET", `${events}?after=${after}&limit=5`)
      expect(limited.status, `after=${after}&limit=5`).toBe(400)
      const byQuery = await http("GET", `${events}/stream?after=${after}`)
      expect(byQuery.status, `stream after=${after}`).toBe(400)
      expect(byQuery.body.message).toMatch(/^after: .*past every position/)
      const byHeader = await http("GET", `${events}/stream`, undefined, { "last-event-id": after })
      expect(byHeader.status, `stream last-event-id ${after}`).toBe(400)
      expect(byHeader.body.message).toMatch(/^last-event-id: .*past every position/)
    }
    // A number past 2^53 would be read as another: refused as it is, naming the parameter.
    for (const after of ["9007199254740992", "9007199254740993", "9999999999999999", "1-9007199254740993", "9999999999999999999-9999999999999999"]) {
      const page = await http("GET", `${events}?after=${after}`)
      expect(page.status, `after=${after}: ${page.text}`).toBe(400)
      expect(page.body.message).toMatch(/^after: /)
      const byHeader = await http("GET", `${events}/stream`, undefined, { "last-event-id": after })
      expect(byHeader.status, `stream last-event-id ${after}`).toBe(400)
      expect(byHeader.body.message).toMatch(/^last-event-id: /)
    }
  })

  it("any other cursor is read, and an event posted after it reaches the page and the stream", async () => {
    const events = await newTask()
    const posted = await http("POST", events, note(1))
    const last: string = posted.body.event.position
    const whole = (await http("GET", events)).body.events as Array<{ position: string }>
    for (const after of ["0", "0-0", "0000000000000000000-1", "1", last]) {
      const page = await http("GET", `${events}?after=${after}`)
      expect(page.status, `after=${after}: ${page.text}`).toBe(200)
      const sse = await http("GET", `${events}/stream?after=${after}`)
      expect(sse.status, `stream after=${after}`).toBe(200)
    }
    expect((await http("GET", `${events}?after=0`)).body.events).toEqual(whole)
    expect((await http("GET", `${events}?after=${last}`)).body).toEqual({ events: [] })

    const byQuery = await openSse(`${events}/stream?after=${last}`)
    const byHeader = await openSse(`${events}/stream`, { "last-event-id": last })
    try {
      const next = await http("POST", events, note(2))
      expect(next.status, next.text).toBe(200)
      expect((await http("GET", `${events}?after=${last}`)).body).toEqual({ events: [next.body.event] })
      for (const sse of [byQuery, byHeader]) {
        const frame = await sse.nextEvent(5000)
        expect(frame.id).toBe(next.body.event.position)
        expect(JSON.parse(frame.data!)).toEqual(next.body.event)
      }
    } finally {
      byQuery.close()
      byHeader.close()
    }
  })

  it("a malformed cursor is a 400 naming after (or the header), never a 5xx", async () => {
    const events = await newTask()
    for (const after of ["-1", "1.5", "1e3", "abc", "1-", "-", "1-2-3", "10000000000000000000-1", "99999999999999999", " 1", "１"]) {
      const res = await http("GET", `${events}?after=${encodeURIComponent(after)}`)
      expect(res.status, `after=${after}: ${res.text}`).toBe(400)
      expect(res.body.message).toMatch(/after/)
      // A header carries only visible ASCII (fetch refuses the others).
      if (!/^[\x21-\x7e]+$/.test(after)) continue
      const header = await http("GET", `${events}/stream`, undefined, { "last-event-id": after })
      expect(header.status, `last-event-id ${after}`).toBe(400)
    }
  })
})
