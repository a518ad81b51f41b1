/**
 * The drain's first log line says what it will wait for in words (an idle gateway
 * said "0 request(s) in progress on 0 connection(s) answered").
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { describeInProgress } from "../../src/http/server/Drain.js"
import { freePort } from "../support/process.js"
import { killAllBuilt, spawnBuilt } from "./builtRun.js"

const dir = mkdtempSync(join(tmpdir(), "gateway-drainwords-"))
afterAll(() => {
  killAllBuilt()
  rmSync(dir, { recursive: true, force: true })
})

describe("the drain's first line", () => {
  it("nothing open, idle connections only, requests in progress", () => {
    expect(describeInProgress({ requests: 0, connections: 0 })).toBe("nothing in progress")
    expect(describeInProgress({ requests: 0, connections: 1 })).toBe("nothing in progress; 1 idle connection to close")
    expect(describeInProgress({ requests: 0, connections: 3 })).toBe("nothing in progress; 3 idle connections to close")
    expect(describeInProgress({ requests: 1, connections: 1 })).toBe("answering the 1 request in progress (1 connection open)")
    expect(describeInProgress({ requests: 2, connections: 5 })).toBe("answering the 2 requests in progress (5 connections open)")
  })

  it("the built process, idle, on SIGTERM: 'nothing in progress', then exit 0", { timeout: 60_000 }, async () => {
    const port = await freePort()
    const run = spawnBuilt({
      PORT: String(port),
      HOST: "127.0.0.1",
      SVC_ADMIN_PORT: "off",
      SVC_LOG_FORMAT: "json",
      SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`
    })
    const deadline = Date.now() + 30_000
    while (!(await fetch(`http://127.0.0.1:${port}/v1/health`, { headers: { connection: "close" } }).then((r) => r.ok, () => false))) {
      if (run.child.exitCode !== null) throw new Error(`exited ${run.child.exitCode}:\n${run.output()}`)
      if (Date.now() > deadline) throw new Error(`not healthy:\n${run.output()}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    // Let the probe's connection close on the server's side too.
    await new Promise((r) => setTimeout(r, 200))
    run.child.kill("SIGTERM")
    const { code } = await run.exited
    expect(code).toBe(0)
    expect(run.output()).toMatch(
      /"msg":"SIGTERM received: draining \(not ready, no new connections, nothing in progress; grace period 10000 ms, SVC_SHUTDOWN_GRACE_MS\)"/
    )
    expect(run.output()).not.toContain("0 request(s)")
  })
})
