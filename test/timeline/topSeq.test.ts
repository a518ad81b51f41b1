/**
 * One event at the top seq blinds no one, on the built process: after a producer posts seq
 * 2,147,483,647, a follower reading `after=<the last position it has>` and two live streams (one
 * resumed by `?after=`, one by `Last-Event-ID`) still get every later event: a lower seq of
 * another source, a late lower seq of the same source, the gateway's own events; a producer of
 * another source starts at seq 1. Before positions, followers read `afterSeq` and the top seq
 * left nothing after it: later events at lower seqs were never seen, and a producer continuing
 * from the end got a 400.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { ACME_US } from "../support/world.js"
import { openSse, type SseConnection } from "../events/sse.js"
import { type BuiltGateway, expectEachOnce, readTimeline, startBuiltGateway, type TimelineEvent, EXAMPLE_FIXTURE } from "./support.js"

const TOP = 2_147_483_647

let gw: BuiltGateway
beforeAll(async () => {
  gw = await startBuiltGateway({ SVC_ADMIN_PORT: "off", SVC_EVENTS_POLL_MS: "200" }, EXAMPLE_FIXTURE)
}, 60_000)
afterAll(async () => {
  await gw?.cleanup()
})

const note = (source: string, seq: number, text = `${source} ${seq}`) => ({ type: "note", source, seq, payload: { text } })

/** `n` events of a stream, in the order it sent them (their data parsed). */
const take = async (sse: SseConnection, n: number) => {
  const got: Array<TimelineEvent & { readonly id: string | undefined }> = []
  while (got.length < n) {
    const frame = await sse.nextEvent(5000)
    got.push({ ...(JSON.parse(frame.data!) as TimelineEvent), id: frame.id })
  }
  return got
}

describe("after the top seq (built process)", () => {
  it("a follower by position and two resumed streams see the later events; another source starts at seq 1", async () => {
    const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } })
    expect(created.status).toBe(201)
    const taskId: string = created.body.id
    const events = `${gw.url}/v1/tasks/${taskId}/events`

    const top = await http("POST", events, note("worker", TOP))
    expect(top.status, top.text).toBe(200)
    expect(top.body.event).toMatchObject({ seq: TOP, origin: "producer" })
    const last: string = top.body.event.position
    // What a follower has read so far ends with the top seq.
    const sofar = await readTimeline(gw.url, taskId)
    expect(sofar.events[sofar.events.length - 1]!.position).toBe(last)

    const byQuery = await openSse(`${events}/stream?after=${encodeURIComponent(last)}`)
    const byHeader = await openSse(`${events}/stream`, { "last-event-id": last })
    try {
      expect(byQuery.status).toBe(200)
      expect(byHeader.status).toBe(200)

      // Past the cap: still refused, naming seq.
      const past = await http("POST", events, note("worker", TOP + 1))
      expect(past.status).toBe(400)
      expect(past.body.message).toMatch(/\bseq\b/)

      const later = [
        await http("POST", events, note("scanner", 5)),
        // A late lower seq of the same source: accepted, read after what the follower had.
        await http("POST", events, note("worker", 10)),
        await http("POST", events, note("scanner", 1, "Réglé à 100 € — 承認済み ✅"))
      ]
      for (const r of later) expect(r.status, r.text).toBe(200)
      // The gateway's own events: the file stored, the signal's step completed.
      const upload = await http("POST", `${gw.url}/v1/tasks/${taskId}/files/ingest`, {
        source: "receipts",
        fileName: "r.pdf",
        fileRef: { provider: "inline_base64", data: Buffer.from("Coffee 4.50").toString("base64") },
        signalTaskId: taskId,
        signalName: "file_submitted"
      })
      expect(upload.status, upload.text).toBe(201)
      const deadline = Date.now() + 10_000
      while ((await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body.step?.id !== "review_expenses") {
        if (Date.now() > deadline) throw new Error("the upload's signal was never applied")
        await new Promise((r) => setTimeout(r, 25))
      }
      const approved = await http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved", step: "review_expenses" })
      expect(approved.status).toBe(200)

      // The follower: everything after its position, each once, the producers' answers among them.
      const { events: after } = await readTimeline(gw.url, taskId, undefined, last)
      expectEachOnce(after)
      expect(after.map((e) => e.position)).not.toContain(last)
      for (const r of later) expect(after).toContainEqual(r.body.event)
      expect(after.filter((e) => e.origin === "producer").map((e) => [e.source, e.seq])).toEqual([["scanner", 5], ["worker", 10], ["scanner", 1]])
      const gatewayTypes = after.filter((e) => e.origin === "gateway").map((e) => e.type)
      expect(gatewayTypes).toContain("file.stored")
      expect(gatewayTypes.filter((t) => t === "step.completed")).toHaveLength(2)
      // Together with what it had read: the whole timeline.
      expect([...sofar.events, ...after].map((e) => e.position)).toEqual((await readTimeline(gw.url, taskId)).events.map((e) => e.position))

      // Both streams: the same events in the same order, ids the positions.
      for (const sse of [byQuery, byHeader]) {
        const streamed = await take(sse, after.length)
        expect(streamed.map((e) => e.id)).toEqual(after.map((e) => e.position))
        expect(streamed.map(({ id: _id, ...e }) => e)).toEqual(after)
      }
    } finally {
      byQuery.close()
      byHeader.close()
    }

    // The top seq again: the same event answers the stored one, another is a 409.
    const again = await http("POST", events, note("worker", TOP))
    expect(again.status).toBe(200)
    expect(again.body.event).toEqual(top.body.event)
    const other = await http("POST", events, note("worker", TOP, "something else"))
    expect(other.status).toBe(409)
    // A new producer after all that starts at 1.
    const fresh = await http("POST", events, note("auditor-bot", 1))
    expect(fresh.status, fresh.text).toBe(200)
    expect(fresh.body.event).toMatchObject({ seq: 1, source: "auditor-bot", origin: "producer" })
  }, 60_000)
})
