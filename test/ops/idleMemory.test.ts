/**
 * A cell gives a burst's memory back once idle (src/http/server/nodeServer.ts collectWhenIdle with
 * the memory-reducing collection, src/lib/reducingCollection.ts). On the built process under npm
 * start's flags: a burst of 1 MiB uploads and task lists; requests to the admin listener, during
 * which nothing is collected (one process, one idle clock); then the idle period with liveness
 * probes every 200 ms, in any spelling the router answers, after which one memory-reducing
 * collection must have run and given back a good part of what the burst added.
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { setTimeout as sleep } from "node:timers/promises"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService, startBuilt } from "../support/process.js"

const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const IDLE_COLLECT_MS = 1000

/** Private memory (clean and dirty) of process `pid`, in MB. */
const privateMb = (pid: number) => {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8")
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(text)![1])
  return (kb("Private_Clean") + kb("Private_Dirty")) / 1024
}

const post = (url: string, body: Buffer) =>
  new Promise<number>((resolve, reject) => {
    const req = request(url, { method: "POST", agent: false, headers: { "content-type": "application/json", "content-length": body.length } }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode!))
    })
    req.on("error", reject)
    req.end(body)
  })

let dir: string
let gw: RunningService

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "idle-memory-"))
  gw = await startBuilt({
    SVC_DATABASE_URL: pathToFileURL(join(dir, "workspace.db")).href,
    SVC_IDLE_COLLECT_MS: String(IDLE_COLLECT_MS),
    SVC_LOG_LEVEL: "warning"
  }, ["--trace-gc"])
}, 60_000)

afterAll(async () => {
  await gw?.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe("memory once idle", { timeout: 120_000 }, () => {
  it("a burst's memory is given back when the cell goes idle", async () => {
    const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "bank-reconciliation", context: { accountId: "1000" } })
    expect(created.status).toBe(201)
    const files = `${gw.url}/v1/tasks/${created.body.id}/files`
    const before = privateMb(gw.pid)
    // The burst: 60 uploads of 1 MiB, 4 at a time, beside task lists.
    let sent = 0
    const uploader = async () => {
      while (sent++ < 60) {
        const body = Buffer.from(JSON.stringify({ source: "s", fileName: "f.bin", data: randomBytes(1024 * 1024).toString("base64") }))
        expect(await post(files, body)).toBe(201)
      }
    }
    const lister = async () => {
      for (let i = 0; i < 150; i++) expect((await http("GET", `${gw.url}/v1/entities/${ACME_US}/tasks`)).status).toBe(200)
    }
    await Promise.all([uploader(), uploader(), uploader(), uploader(), lister()])
    const burst = privateMb(gw.pid)
    /** V8's memory-reducing collections so far (`--trace-gc` marks them "(reduce)"; one ran after start). */
    const reducing = () => gw.output().split("\n").filter((line) => line.includes("Mark-Compact (reduce)")).length
    const reducingBefore = reducing()
    // The admin listener is the same process: its requests keep both ports from counting as idle.
    const adminUntil = Date.now() + IDLE_COLLECT_MS * 2.5
    while (Date.now() < adminUntil) {
      expect((await http("GET", `${gw.adminUrl}/workspace/openapi.json`)).status).toBe(200)
      await sleep(IDLE_COLLECT_MS / 5)
    }
    expect(reducing(), "a collection while the admin listener was busy").toBe(reducingBefore)
    // Idle: the collection comes after IDLE_COLLECT_MS without a request (checked every quarter of
    // it). Liveness probes go on meanwhile, as an orchestrator's do, spelled as any probe may be:
    // they do not count as requests.
    const probes = ["/v1/health", "/readyz", "/v1/health/", "//v1/Health", "/v1/%68ealth"]
    const probesUntil = Date.now() + IDLE_COLLECT_MS * 3
    for (let i = 0; Date.now() < probesUntil; i++) {
      expect((await http("GET", `${gw.url}${probes[i % probes.length]}`)).status).toBe(200)
      await sleep(IDLE_COLLECT_MS / 5)
    }
    const idle = privateMb(gw.pid)
    // One collection ran, probes or not, and was the memory-reducing one (two passes of V8's own).
    expect(reducing()).toBeGreaterThan(reducingBefore)
    expect(reducing()).toBeLessThanOrEqual(reducingBefore + 2)
    const added = burst - before
    const summary = `private MB: ${before.toFixed(1)} before, ${burst.toFixed(1)} after the burst, ${idle.toFixed(1)} once idle`
    expect(added, summary).toBeGreaterThan(20)
    // What it gave back: 12-28 MB of the 41-47 a burst added here (less when other tests load the
    // machine); a plain full collection gave back 0-5 MB, and none ran while probes counted.
    expect(burst - idle, summary).toBeGreaterThan(added * 0.15)
  })
})
