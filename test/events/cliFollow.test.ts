/**
 * `svc events follow` reads only what is new: against a counting stand-in
 * for the gateway whose timeline grows while the follower polls, every request after the first
 * asks for the events after the last position it printed, so the events served add up to the
 * timeline once, not once per poll.
 */
import { afterAll, describe, expect, it } from "vitest"
import { createServer, type Server } from "node:http"
import { stopAllProcesses, svc } from "../cli/harness.js"

const TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"

/** The n-th event of the timeline: its position is not its seq (the cursor is the position). */
const position = (n: number) => String(100 + n)
const event = (n: number) => ({
  taskId: TASK,
  type: "note",
  source: "worker",
  seq: n,
  payload: { n },
  createdAt: "2026-01-01T00:00:00.000Z",
  position: position(n),
  origin: "producer"
})

afterAll(() => stopAllProcesses())

describe("svc events follow", () => {
  it("asks for events after the last position it has: O(new events) read per poll", async () => {
    const timeline = [1, 2, 3].map(event)
    const requests: Array<URL> = []
    let served = 0
    const server: Server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x")
      requests.push(url)
      if (req.method !== "GET" || url.pathname !== `/v1/tasks/${TASK}/events`) {
        res.writeHead(404, { "content-type": "application/json" }).end('{"statusCode":404,"message":"no","error":"Not Found"}')
        return
      }
      // The timeline grows by one event per request.
      timeline.push(event(timeline.length + 1))
      const after = url.searchParams.get("after")
      const limit = Number(url.searchParams.get("limit") ?? Infinity)
      const page = timeline.filter((e) => after === null || Number(e.position) > Number(after)).slice(0, limit)
      served += page.length
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ events: page }))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const { port } = server.address() as { port: number }
      const run = await svc(["events", "follow", TASK, "--interval", "0.1", "--timeout", "1.5", "--json"], {
        env: { SVC_URL: `http://127.0.0.1:${port}` }
      })
      expect(run.code, run.stderr).toBe(0)
      const printed = run.stdout.trim().split("\n").map((l) => (JSON.parse(l) as { seq: number }).seq)
      expect(requests.length).toBeGreaterThanOrEqual(4)
      // Every event printed once, in order, with no gap.
      expect(printed).toEqual(printed.map((_, i) => i + 1))
      // The first request reads from the start; every later one starts after what was printed before it.
      expect(requests[0]!.searchParams.get("after")).toBeNull()
      for (const url of requests.slice(1)) expect(Number(url.searchParams.get("after"))).toBeGreaterThanOrEqual(Number(position(3)))
      expect(requests.every((u) => !u.searchParams.has("afterSeq"))).toBe(true)
      expect(requests.every((u) => u.searchParams.get("limit") === "1000")).toBe(true)
      // Events served add up to the events printed (plus the last answer's, if the timeout cut it):
      // a follower re-reading the whole timeline would have been served O(polls x events).
      expect(served).toBeLessThanOrEqual(printed.length + 1)
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }, 30_000)
})
