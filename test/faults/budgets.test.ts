/**
 * Budgets of the server, on the built process over real sockets:
 * - bytes of request bodies held at once (SVC_MAX_BODY_BYTES_IN_FLIGHT): concurrent uploads are
 *   admitted while they fit, the others wait briefly then answer 503 with Retry-After in the
 *   error shape; a client that retries gets every upload stored, and the process's peak RSS
 *   stays near the budget instead of growing with the number of uploads; a small body (an
 *   ordinary API call) passes whatever the budget holds;
 * - connections per client address (SVC_MAX_CONNECTIONS_PER_CLIENT): 1,100 slow-body connections
 *   from one address (127.0.0.2) take no more than their share, and /v1/health from another
 *   address is answered.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { http as json, type RunningService, startBuilt } from "../support/process.js"
import { waitFor } from "../support/waitFor.js"

const MiB = 1024 * 1024
let dir: string
const running: Array<RunningService> = []
let dbCount = 0

const start = async (env: Record<string, string>) => {
  const service = await startBuilt({ SVC_DATABASE_URL: `file:${join(dir, `budget-${++dbCount}.db`)}`, SVC_ADMIN_PORT: "off", ...env })
  running.push(service)
  return service
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gateway-budgets-"))
})
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()))
  rmSync(dir, { recursive: true, force: true })
})

const newTask = async (base: string) => {
  const entities = await json("GET", `${base}/v1/entities`)
  const created = await json("POST", `${base}/v1/entities/${entities.body[0].id}/tasks`, {
    workflowId: "expense-review",
    context: { period: "2026-11" }
  })
  expect(created.status).toBe(201)
  return encodeURIComponent(created.body.id)
}

const memoryOf = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)![1]) * 1024
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") }
}

interface Answer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: any
}

const post = (port: number, path: string, body: Buffer, localAddress = "127.0.0.1") =>
  new Promise<Answer>((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port, method: "POST", path, agent: false, localAddress, headers: { "content-type": "application/json", "content-length": body.length } },
      (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (c: string) => (text += c))
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: text === "" ? undefined : JSON.parse(text) }))
      }
    )
    req.on("error", reject)
    req.end(body)
  })

const healthFrom = (port: number, localAddress: string) =>
  new Promise<number>((resolve) => {
    const req = http.get({ host: "127.0.0.1", port, path: "/v1/health", agent: false, localAddress, timeout: 5_000 }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode!))
    })
    req.on("timeout", () => req.destroy())
    req.on("error", () => resolve(0))
  })

describe("bytes of request bodies held at once", () => {
  it("a body that does not fit waits, then answers 503 with Retry-After; it fits once room is given back; small bodies pass", async () => {
    const service = await start({ SVC_MAX_BODY_BYTES_IN_FLIGHT: String(2 * MiB), SVC_BODY_BUDGET_WAIT_MS: "300" })
    const port = Number(new URL(service.url).port)
    const task = await newTask(service.url)
    // Two requests that declare 1 MiB each and send a part: they hold the whole budget.
    const holders = [0, 1].map(() => {
      const socket = net.connect(port, "127.0.0.1")
      socket.on("error", () => {})
      socket.write(
        `POST /v1/tasks/${task}/events HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${MiB}\r\n\r\n{"a":"`
      )
      return socket
    })
    await new Promise((r) => setTimeout(r, 200))
    // An ordinary call (a small body) passes at once, whatever the budget holds.
    const small = await json("POST", `${service.url}/v1/tasks/${task}/events`, { type: "t.note", source: "t", seq: 1000, payload: {} })
    expect(small.status).toBe(200)
    // A larger body (a 128 KiB file) waits for room, then is refused.
    const body = Buffer.from(JSON.stringify({ source: "t", fileName: "a.bin", data: randomBytes(128 * 1024).toString("base64") }))
    const started = performance.now()
    const refused = await post(port, `/v1/tasks/${task}/files`, body)
    const waited = performance.now() - started
    expect(refused.status).toBe(503)
    expect(refused.headers["retry-after"]).toBe("1")
    expect(refused.body).toEqual({ statusCode: 503, error: "Service Unavailable", message: expect.stringContaining("SVC_MAX_BODY_BYTES_IN_FLIGHT") })
    expect(waited).toBeGreaterThanOrEqual(250)
    // A chunked body does not wait: its first chunk past the budget is refused the same way.
    const chunked = await new Promise<Answer>((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port, method: "POST", path: `/v1/tasks/${task}/files`, agent: false, headers: { "content-type": "application/json", "transfer-encoding": "chunked" } }, (res) => {
        let text = ""
        res.on("data", (c: Buffer) => (text += c))
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text) }))
      })
      req.on("error", reject)
      req.end(body)
    })
    expect(chunked.status).toBe(503)
    expect(chunked.headers["retry-after"]).toBe("1")
    // The holders leave: their bytes are given back, and the same upload is stored.
    for (const s of holders) s.destroy()
    await new Promise((r) => setTimeout(r, 100))
    expect((await post(port, `/v1/tasks/${task}/files`, body)).status).toBe(201)
    expect((await json("GET", `${service.url}/v1/health`)).status).toBe(200)
    expect(service.output()).not.toMatch(/"level":"error"/)
  }, 60_000)

  it("16 concurrent uploads: held to the budget, every one stored after its client retries, peak RSS bounded", async () => {
    const service = await start({ SVC_MAX_BODY_BYTES_IN_FLIGHT: String(24 * MiB), SVC_BODY_BUDGET_WAIT_MS: "1000" })
    const port = Number(new URL(service.url).port)
    const task = await newTask(service.url)
    // 6 MiB files: 8 MiB base64 bodies; 16 of them held at once would be 128 MiB of bodies.
    const body = Buffer.from(JSON.stringify({ source: "t", fileName: "big.bin", data: randomBytes(6 * MiB).toString("base64") }))
    await new Promise((r) => setTimeout(r, 500))
    const before = memoryOf(service.pid).rss
    const statuses: Array<string> = []
    await Promise.all(Array.from({ length: 16 }, async () => {
      for (let attempt = 0; attempt < 60; attempt++) {
        const a = await post(port, `/v1/tasks/${task}/files`, body)
        statuses.push(`${a.status}${a.headers["retry-after"] !== undefined ? "+retry-after" : ""}`)
        if (a.status !== 503 || a.headers["retry-after"] === undefined) return
        await new Promise((r) => setTimeout(r, 200 + Math.random() * 800))
      }
    }))
    const peak = memoryOf(service.pid).hwm
    expect(statuses.filter((s) => s === "201")).toHaveLength(16)
    expect(statuses.filter((s) => s !== "201" && s !== "503+retry-after")).toEqual([])
    // Each body held costs about 4x its size while parsed and stored; 3 fit in 24 MiB. All 16
    // at once took it about 540 MB above the baseline.
    expect((peak - before) / MiB, `RSS ${before / MiB} MiB before, peak ${peak / MiB} MiB`).toBeLessThan(250)
  }, 120_000)
})

describe("connections per client address", () => {
  it("1,100 slow-body connections from one address: its share is capped, health from another address is answered", async () => {
    const service = await start({})
    const port = Number(new URL(service.url).port)
    const sockets: Array<net.Socket> = []
    let closedByServer = 0
    try {
      await Promise.all(Array.from({ length: 1_100 }, () =>
        new Promise<void>((resolve) => {
          const socket = net.connect({ port, host: "127.0.0.1", localAddress: "127.0.0.2" }, () => {
            socket.write(`POST /v1/tasks/x/action HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"a`)
            resolve()
          })
          socket.on("close", () => closedByServer++)
          socket.on("error", () => resolve())
          sockets.push(socket)
        })))
      // The server closes what is past the address's cap as it accepts them: wait on that, not on a timer.
      await waitFor("the server to close the connections past the address's cap of 256", () => closedByServer >= 1_100 - 256, {
        seen: () => `closed by the server: ${closedByServer}`
      })
      expect(await healthFrom(port, "127.0.0.1")).toBe(200)
      // Once that address is below its cap again (the server has seen the closes), a new
      // connection of its own is served too.
      for (const s of sockets.splice(0)) s.destroy()
      let status = 0
      await waitFor("a connection from 127.0.0.2 to be served once it is below its cap", async () =>
        (status = await healthFrom(port, "127.0.0.2")) === 200, { everyMs: 100, seen: () => `last status: ${status}` })
    } finally {
      for (const s of sockets) s.destroy()
    }
  }, 60_000)
})
