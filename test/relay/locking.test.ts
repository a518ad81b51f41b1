/**
 * SQLite locking as promised: a write blocked by another process's lock
 * waits without blocking the event loop and answers 503 with Retry-After at the documented
 * bound (SVC_DB_BUSY_TIMEOUT_MS); a lock released in time lets it through. The write-ahead log
 * is checkpointed on a schedule and at a clean exit, and stays bounded meanwhile.
 */
import { afterEach, describe, expect, it } from "vitest"
import { join } from "node:path"
import { database, EXPENSE_TASK, LOCK_HOLDER, pollHealth, request, runCleanups, sizeOf, sleep, spawnScript, startGateway, tempDir, waitForLine, HEALTH_BOUND_MS } from "./support.js"
import { waitFor } from "../support/waitFor.js"

const cleanups: Array<() => Promise<void> | void> = []
afterEach(() => runCleanups(cleanups))

const event = (seq: number) => ({ type: "t", source: "w", seq, payload: { seq } })

describe("SQLite locking", { timeout: 120_000 }, () => {
  it("a write blocked by another process's lock answers 503 with Retry-After at the bound; the process keeps serving meanwhile", async () => {
    const dir = tempDir(cleanups)
    const file = join(dir, "workspace.db")
    const gw = await startGateway(file, cleanups, { SVC_DB_BUSY_TIMEOUT_MS: "1500" })
    const eventsUrl = `${gw.url}/v1/tasks/${EXPENSE_TASK}/events`
    expect((await request("POST", eventsUrl, event(1001))).status).toBe(200)

    const holder = spawnScript(LOCK_HOLDER, [file, "8000"], cleanups)
    await waitForLine(holder, "LOCKED")
    const health = pollHealth(gw.url, 10)
    const [blocked, read] = await Promise.all([
      request("POST", eventsUrl, event(1002)),
      // Readers are not writers: WAL lets them through while the lock is held.
      sleep(200).then(() => request("GET", eventsUrl))
    ])
    const seen = await health.stop()
    console.log(`blocked write: ${blocked.status} after ${Math.round(blocked.ms)} ms; read ${Math.round(read.ms)} ms; health ${JSON.stringify(seen)}`)
    expect(blocked.status).toBe(503)
    expect(blocked.body).toEqual({ statusCode: 503, error: "Service Unavailable", message: expect.stringMatching(/busy/) })
    expect(blocked.headers["retry-after"]).toBe("1")
    expect(blocked.ms).toBeGreaterThanOrEqual(1400)
    expect(blocked.ms).toBeLessThan(4000)
    expect(read.status).toBe(200)
    expect(read.ms).toBeLessThan(1000)
    expect(seen.statuses).toEqual([200])
    expect(seen.p99).toBeLessThan(HEALTH_BOUND_MS)
    // Nothing of the refused write was stored.
    // (Of source w: the gateway's records read with seq = their position, which may be any number.)
    expect((await request("GET", eventsUrl)).body.events.filter((e: { source: string }) => e.source === "w").map((e: { seq: number }) => e.seq))
      .not.toContain(1002)
    holder.kill("SIGKILL")
  })

  it("a lock released within the bound lets the write through, without blocking the event loop", async () => {
    const dir = tempDir(cleanups)
    const file = join(dir, "workspace.db")
    const gw = await startGateway(file, cleanups)
    const eventsUrl = `${gw.url}/v1/tasks/${EXPENSE_TASK}/events`
    const holder = spawnScript(LOCK_HOLDER, [file, "1500"], cleanups)
    await waitForLine(holder, "LOCKED")
    const health = pollHealth(gw.url, 10)
    const write = await request("POST", eventsUrl, event(1007))
    const seen = await health.stop()
    console.log(`write after the lock: ${write.status} after ${Math.round(write.ms)} ms; health ${JSON.stringify(seen)}`)
    expect(write.status).toBe(200)
    expect(write.ms).toBeGreaterThan(500)
    expect(seen.p99).toBeLessThan(HEALTH_BOUND_MS)
    await waitForLine(holder, "RELEASED")
  })

  it("the write-ahead log stays bounded, is truncated on a schedule, and is empty after a clean exit", async () => {
    const dir = tempDir(cleanups)
    const file = join(dir, "workspace.db")
    const wal = `${file}-wal`
    const gw = await startGateway(file, cleanups, {
      SVC_DB_CHECKPOINT_INTERVAL_MS: "1000",
      SVC_DB_WAL_LIMIT_BYTES: String(4 * 1024 * 1024),
      SVC_MAX_BODY_BYTES: String(32 * 1024 * 1024),
      // Three 11.2 MB bodies at once from this one client are 33.55 MB, just over its default
      // share (a quarter of 128 MiB): the third waited for room, and on a loaded machine the
      // first two took longer than the 2 s wait, so it got a 503 mid-body (EPIPE here).
      SVC_MAX_BODY_BYTES_PER_CLIENT: String(64 * 1024 * 1024)
    })
    const upload = JSON.stringify({ source: "exports", fileName: "big.bin", data: Buffer.alloc(8 * 1024 * 1024, 7).toString("base64") })
    // Three writers at once, three 8 MB uploads each, the log's size sampled all along.
    let largest = 0
    const sampler = setInterval(() => (largest = Math.max(largest, sizeOf(wal))), 10)
    const statuses = await Promise.all(Array.from({ length: 3 }, async () => {
      const seen: Array<number> = []
      for (let i = 0; i < 3; i++) seen.push((await request("POST", `${gw.url}/v1/tasks/${EXPENSE_TASK}/files`, upload)).status)
      return seen
    }))
    clearInterval(sampler)
    console.log(`largest WAL while 72 MB were written: ${(largest / 1024 / 1024).toFixed(1)} MiB; database ${Math.round(sizeOf(file) / 1024 / 1024)} MiB`)
    expect(statuses.flat()).toEqual(Array(9).fill(201))
    // About the limit plus a transaction or two: the log is checkpointed and restarted as it goes.
    expect(largest).toBeLessThan(30 * 1024 * 1024)
    // The scheduled TRUNCATE empties it while the process runs.
    await waitFor("the scheduled TRUNCATE to empty the log", () => sizeOf(wal) === 0, { timeoutMs: 10_000, everyMs: 100 })
    expect(sizeOf(wal)).toBe(0)
    // More writes, then a clean exit: nothing is left in the log, everything is in the database.
    expect((await request("POST", `${gw.url}/v1/tasks/${EXPENSE_TASK}/files`, upload)).status).toBe(201)
    await gw.stop()
    expect(sizeOf(wal)).toBe(0)
    const db = database(file, cleanups)
    expect(await db.scalar("SELECT COUNT(*) FROM documents WHERE filename = 'big.bin'")).toBe(10)
  })
})
