/**
 * A gateway on a workspace service (SVC_WORKSPACE_URL) keeps its connections to the service within
 * SVC_WORKSPACE_MAX_CONNECTIONS, so that a burst of requests waits for a connection instead of
 * opening more than the service's per-client cap (SVC_MAX_CONNECTIONS_PER_CLIENT) lets in: those
 * the service closes at once, the call fails and is retried after a backoff (800 task lists at
 * once: 860 refused calls). Downloads have their own share: downloads whose readers have stopped
 * hold their connections, and the calls still go through.
 *
 * Both processes built (dist/main.js): the store gateway's admin listener is the workspace service.
 */
import { randomBytes } from "node:crypto"
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningService, startBuilt } from "../support/process.js"
import { type BuiltGateway, startBuiltGateway } from "../timeline/support.js"

const TOKEN = "connections-test-admin-token-0123456789"
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
/** The service lets 8 connections in per client; the gateway keeps 6 (3 calls, 2 downloads, 1 tenant lookup). */
const SERVICE_CAP = 8
const GATEWAY_MAX = 6
const DOWNLOADS = 2
const LISTS = 200

let store: BuiltGateway
let gateway: RunningService

beforeAll(async () => {
  store = await startBuiltGateway({ SVC_ADMIN_TOKEN: TOKEN, SVC_MAX_CONNECTIONS_PER_CLIENT: String(SERVICE_CAP) })
  gateway = await startBuilt({
    SVC_WORKSPACE_URL: store.adminUrl,
    SVC_WORKSPACE_TOKEN: TOKEN,
    SVC_TENANT_SLUG: "acme",
    SVC_ADMIN_PORT: "off",
    SVC_WORKSPACE_MAX_CONNECTIONS: String(GATEWAY_MAX)
  })
}, 60_000)

afterAll(async () => {
  await gateway?.stop()
  await store?.cleanup()
})

interface Answer {
  readonly status: number
  readonly body: string
}

/** One GET on a connection of its own from `localAddress` (a loopback address: many clients). */
const get = (url: string, localAddress: string) =>
  new Promise<Answer>((resolve, reject) => {
    http.get(url, { agent: false, localAddress }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => (body += chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
    }).on("error", reject)
  })

/** A download whose reader stops after its headers: the gateway's connection upstream stays taken. */
const stalledDownload = (url: string) =>
  new Promise<http.ClientRequest>((resolve, reject) => {
    const req = http.get(url, { agent: false }, (res) => {
      expect(res.statusCode).toBe(200)
      res.pause()
      resolve(req)
    })
    req.on("error", reject)
  })

describe("the gateway's connections to its workspace service", { timeout: 60_000 }, () => {
  it(`${LISTS} task lists at once, beside ${DOWNLOADS} stalled downloads: all answered, no call refused by the service's per-client cap; a third download waits for a download's connection`, async () => {
    const tasks = JSON.parse((await get(`${gateway.url}/v1/entities/${ACME_US}/tasks`, "127.0.0.1")).body) as Array<{ id: string }>
    const upload = await fetch(`${gateway.url}/v1/tasks/${tasks[0]!.id}/files/raw?source=test&fileName=big.pdf`, {
      method: "POST",
      headers: { "x-svc-upload": "raw", "content-type": "application/pdf" },
      body: randomBytes(16 * 1024 * 1024)
    })
    expect(upload.status).toBe(201)
    const { downloadUrl } = await upload.json() as { downloadUrl: string }
    const before = gateway.output().length
    const stalled = await Promise.all(Array.from({ length: DOWNLOADS }, () => stalledDownload(`${gateway.url}${downloadUrl}`)))
    try {
      // Spread over 8 loopback addresses: each under the gateway's own per-client cap.
      const answers = await Promise.all(Array.from({ length: LISTS }, (_, i) =>
        get(`${gateway.url}/v1/entities/${ACME_US}/tasks`, `127.0.0.${2 + (i % 8)}`)))
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200))
      for (const a of answers) expect(JSON.parse(a.body)).toHaveLength(tasks.length)
      // No call was refused (and retried): the warning the client logs for each.
      expect(gateway.output().slice(before)).not.toContain("workspace call failed")
      // Downloads have no more than their share: one more waits for a download's connection,
      // and starts once a stalled one is gone.
      let started = false
      const next = stalledDownload(`${gateway.url}${downloadUrl}`).then((req) => {
        started = true
        return req
      })
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(started).toBe(false)
      stalled.shift()!.destroy()
      stalled.push(await next)
    } finally {
      for (const req of stalled) req.destroy()
    }
  })
})

/** A pass-through proxy to `upstream` that holds every task board `holdMs` first (a slow service). */
const slowBoards = (upstream: string, holdMs: number) =>
  new Promise<{ readonly url: string; readonly close: () => Promise<void> }>((resolve) => {
    const target = new URL(upstream)
    const agent = new http.Agent({ keepAlive: true })
    const forward = (req: http.IncomingMessage, res: http.ServerResponse) => {
      const out = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      })
      out.on("error", () => res.destroy())
      req.pipe(out)
    }
    const server = http.createServer((req, res) => {
      if (/\/board(\?|$)/.test(req.url ?? "")) setTimeout(forward, holdMs, req, res)
      else forward(req, res)
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            agent.destroy()
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

describe("readiness behind a queue of calls", { timeout: 60_000 }, () => {
  it("/readyz answers 200 at once while task lists wait seconds for the calls' connections: the tenant lookup has its own", async () => {
    const proxy = await slowBoards(store.adminUrl, 300)
    const behind = await startBuilt({
      SVC_WORKSPACE_URL: proxy.url,
      SVC_WORKSPACE_TOKEN: TOKEN,
      SVC_TENANT_SLUG: "acme",
      SVC_ADMIN_PORT: "off",
      // 1 for calls, 1 for downloads, 1 for the tenant lookup.
      SVC_WORKSPACE_MAX_CONNECTIONS: "3"
    })
    try {
      // 12 lists on one call connection, 300 ms each: the last waits about 3.6 s.
      const lists = Promise.all(Array.from({ length: 12 }, (_, i) => get(`${behind.url}/v1/entities/${ACME_US}/tasks`, `127.0.0.${2 + (i % 8)}`)))
      await new Promise((resolve) => setTimeout(resolve, 1_200))
      // Past the readiness cache (1 s): this probe makes its own lookup while the queue is long.
      const started = performance.now()
      const ready = await get(`${behind.url}/readyz`, "127.0.0.1")
      const readyMs = performance.now() - started
      expect(ready.status, ready.body).toBe(200)
      expect(readyMs).toBeLessThan(1_000)
      const answers = await lists
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200))
    } finally {
      await behind.stop()
      await proxy.close()
    }
  })
})
