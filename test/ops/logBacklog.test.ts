/**
 * A log collector that stops reading: the built gateway keeps answering, holds at most
 * SVC_LOG_BACKLOG_BYTES of log output for it, and drops the rest counted. Once stdout takes
 * output again a line says how many were dropped, so every request is either logged or counted.
 * (Node queues in memory whatever a pipe does not take: before, the process grew by every line.)
 * A collector that exits closes the pipe: the gateway keeps answering (it ended with EPIPE).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import * as http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { boundedSink } from "../../src/observability/logging.js"
import { BUILT_ENTRY, freePort } from "../support/process.js"
import { waitFor } from "../support/waitFor.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const dir = mkdtempSync(join(tmpdir(), "log-backlog-"))
const children: Array<ChildProcess> = []

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue
    child.kill("SIGKILL")
    await new Promise((resolve) => child.once("exit", resolve))
  }
  rmSync(dir, { recursive: true, force: true })
})

const agent = new http.Agent({ keepAlive: true, maxSockets: 10 })
const health = (base: string, id: string) =>
  new Promise<number>((resolve, reject) => {
    http.get(`${base}/v1/health`, { agent, headers: { "x-request-id": id } }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
    }).on("error", reject)
  })

/**
 * The built gateway on its own database `db`, its stdout and stderr pipes nobody reads until the
 * test says so (killed by pid after the file); resolves once it answers.
 */
const startPiped = async (db: string, env: Record<string, string> = {}) => {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const child = spawn(process.execPath, [BUILT_ENTRY], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", SVC_ADMIN_PORT: "off", SVC_DATABASE_URL: `file:${join(dir, db)}`, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.push(child)
  await waitFor("the gateway to answer", async () => {
    try {
      return (await health(base, "start")) === 200
    } catch {
      return false
    }
  }, { timeoutMs: 30_000, everyMs: 100 })
  return { child, base }
}

describe("the request log under a stalled collector", { timeout: 60_000 }, () => {
  it("holds at most SVC_LOG_BACKLOG_BYTES, drops the rest counted, and says how many once stdout reads again", async () => {
    // Nobody reads stdout until told: the pipe fills (64 KiB), then the process holds the rest.
    const { child, base } = await startPiped("w.db", { SVC_LOG_BACKLOG_BYTES: "65536" })
    child.stderr!.resume()

    // About 1 MiB of request lines, 16 times the bound.
    const N = 4_000
    const ids = Array.from({ length: N }, (_, i) => `flood-${i}-x`)
    for (let i = 0; i < N; i += 10) {
      const statuses = await Promise.all(ids.slice(i, i + 10).map((id) => health(base, id)))
      expect(statuses).toEqual(statuses.map(() => 200))
    }

    let output = ""
    child.stdout!.setEncoding("utf8")
    child.stdout!.on("data", (chunk: string) => (output += chunk))
    // A request after the collector came back: its batch carries the count of what was dropped.
    await waitFor("the count of dropped lines", async () => {
      await health(base, `after-${Date.now()}`)
      return /line\(s\) dropped/.test(output)
    }, { timeoutMs: 20_000, everyMs: 200 })

    const lines = output.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Record<string, unknown>)
    const logged = new Set(lines.filter((l) => l.msg === "request").map((l) => l.requestId as string))
    const dropped = lines.filter((l) => /line\(s\) dropped/.test(String(l.msg))).reduce((n, l) => n + Number(l.dropped), 0)
    expect(dropped).toBeGreaterThan(0)
    // Everything the pipe did not take is either written or counted: logged + dropped >= the flood
    // (the dropped may also count the start-up lines and the first requests after it).
    const floodLogged = ids.filter((id) => logged.has(id)).length
    expect(floodLogged).toBeLessThan(N)
    expect(floodLogged + dropped).toBeGreaterThanOrEqual(N)
    // The bound held: what reached us before the first count is the pipe's buffer (64 KiB), the
    // bound and a batch or two (64 KiB each), not the flood's megabyte (238 KB seen).
    const beforeCount = output.slice(0, output.search(/line\(s\) dropped/))
    expect(beforeCount.length).toBeLessThan(400 * 1024)
    expect(floodLogged + dropped).toBeLessThan(N + 200)
  })

  it("a collector that exits (its pipe closed): the gateway keeps answering, says so once on stderr, drops the lines", async () => {
    const { child: gateway, base } = await startPiped("closed.db")
    let stderr = ""
    gateway.stderr!.setEncoding("utf8")
    gateway.stderr!.on("data", (chunk: string) => (stderr += chunk))
    gateway.stdout!.resume()
    gateway.stdout!.destroy()
    // Past a flush (every 25 ms): the first write after the close fails with EPIPE.
    for (let i = 0; i < 40; i++) {
      expect(await health(base, `closed-${i}`)).toBe(200)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    expect(gateway.exitCode).toBeNull()
    await waitFor("the note on stderr", () => /log: stdout failed \(EPIPE\)/.test(stderr), { timeoutMs: 5_000 })
    expect(stderr.match(/stdout failed/g)).toHaveLength(1)
  })

  it("the count is a line in the format of the lines it stands for (pretty on a terminal)", () => {
    const written: Array<string> = []
    const out = { writableLength: 0, write: (text: string) => written.push(text) }
    const sink = boundedSink(() => out, () => 100)
    out.writableLength = 101
    sink.write("12:00:00.000 INFO  request a\n12:00:00.001 INFO  request b\n")
    expect(written).toEqual([])
    out.writableLength = 100
    sink.write("12:00:00.002 INFO  request c\n")
    expect(written).toHaveLength(2)
    expect(written[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN  log: 2 line\(s\) dropped: .* dropped=2\n$/)
    expect(written[1]).toBe("12:00:00.002 INFO  request c\n")
  })
})
