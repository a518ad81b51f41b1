/**
 * The event stream on the real process (src/main.ts, embedded workspace on a temporary
 * database): the engine's events reach an open stream within a second, another process's
 * writes to the same database reach it through the slow poll, and a graceful shutdown ends
 * the stream instead of being held open by it.
 */
import { afterAll, describe, expect, it } from "vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { http, type RunningService, startService } from "../support/process.js"
import { openSse } from "./sse.js"

const FIXTURE = fileURLToPath(new URL("../fixtures/example.json", import.meta.url))
/** At review_expenses (TABLE_REVIEW), then sign_off; a worker's event seq 1 seeded. */
const TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"

const dirs: Array<string> = []
const services: Array<RunningService> = []
afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()))
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const start = async (dbDir: string, env: Record<string, string> = {}) => {
  const service = await startService({
    SVC_DATABASE_URL: `file:${join(dbDir, "workspace.db")}`,
    SVC_SEED_FILE: FIXTURE,
    SVC_ADMIN_PORT: "off",
    SVC_SHUTDOWN_GRACE_MS: "10000",
    ...env
  })
  services.push(service)
  return service
}

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "event-stream-"))
  dirs.push(dir)
  return dir
}

describe("event stream on the real process", () => {
  it("engine events arrive within a second; another process's append arrives by the poll; SIGTERM ends the stream", async () => {
    const dir = tempDir()
    const gateway = await start(dir, { SVC_EVENTS_POLL_MS: "300" })
    const other = await start(dir)
    // Resume after the seeded event: its position, as an EventSource would send it.
    const seeded = await http("GET", `${gateway.url}/v1/tasks/${TASK}/events`)
    expect(seeded.body.events.map((e: { seq: number }) => e.seq)).toEqual([1])
    const sse = await openSse(`${gateway.url}/v1/tasks/${TASK}/events/stream`, { "last-event-id": seeded.body.events[0].position })
    try {
      expect(sse.status).toBe(200)

      // The embedded engine applies the approval and writes its events: the bell wakes the stream.
      const approvedAt = performance.now()
      const approved = await http("POST", `${gateway.url}/v1/tasks/${TASK}/action`, { type: "approved" })
      expect(approved.status).toBe(200)
      const step = await sse.nextEvent(1000)
      const engineLatency = performance.now() - approvedAt
      expect(engineLatency).toBeLessThan(1000)
      const stepEvent = JSON.parse(step.data!)
      expect(stepEvent).toMatchObject({ type: "step.completed", source: "workspace", origin: "gateway", payload: { decision: "approve" } })
      expect(step.id).toBe(stepEvent.position)
      // The step that became current says who it waits for (written with the approval's events).
      const waiting = await sse.nextEvent(1000)
      expect(JSON.parse(waiting.data!)).toMatchObject({ type: "task.waiting", source: "workspace", origin: "gateway" })
      expect(waiting.id).toBe(JSON.parse(waiting.data!).position)

      // Written by another process on the same database: no bell here, the task's poll finds it.
      const postedAt = performance.now()
      const posted = await http("POST", `${other.url}/v1/tasks/${TASK}/events`, { type: "note", source: "worker", seq: 10, payload: {} })
      expect(posted.status).toBe(200)
      const polled = await sse.nextEvent(2000)
      const pollLatency = performance.now() - postedAt
      expect(polled.id).toBe(posted.body.event.position)
      expect(JSON.parse(polled.data!)).toMatchObject({ seq: 10, source: "worker", origin: "producer" })
      expect(pollLatency).toBeLessThan(1000)
      console.log(`engine event ${engineLatency.toFixed(0)} ms after the approval; other process's event ${pollLatency.toFixed(0)} ms (poll 300 ms)`)

      // A graceful shutdown ends the open stream and exits 0, well inside the grace period.
      const signalledAt = performance.now()
      gateway.kill("SIGTERM")
      await sse.ended
      const exit = await gateway.exited
      expect(exit.code).toBe(0)
      expect(exit.at - signalledAt).toBeLessThan(5000)
      expect(gateway.output()).toMatch(/drained in \d+ ms/)
    } finally {
      sse.close()
    }
  }, 90_000)
})
