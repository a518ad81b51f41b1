/**
 * The built gateway (`npm start`'s dist/main.js and node flags) on a temporary SQLite file with
 * the demo data, for the file tests that must hold on the real process.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll } from "vitest"
import { http, type RunningService, startBuilt } from "../support/process.js"

/** The demo tenant's (acme) first entity. */
export const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"

export interface BuiltGateway {
  readonly service: RunningService
  readonly url: string
  readonly dir: string
  /** A new task of `workflowId` (its first step is current). */
  readonly newTask: (workflowId?: string) => Promise<string>
  readonly stop: () => Promise<void>
}

export const startGateway = async (env: Record<string, string> = {}): Promise<BuiltGateway> => {
  const dir = mkdtempSync(join(tmpdir(), "files-built-"))
  let service: RunningService
  try {
    service = await startBuilt({ SVC_DATABASE_URL: pathToFileURL(join(dir, "workspace.db")).href, ...env })
  } catch (e) {
    rmSync(dir, { recursive: true, force: true })
    throw e
  }
  const newTask = async (workflowId = "bank-reconciliation") => {
    const res = await http("POST", `${service.url}/v1/entities/${ACME_US}/tasks`, { workflowId, context: workflowId === "expense-review" ? { period: "2026-11" } : { accountId: "1000" } })
    if (res.status !== 201 && res.status !== 200) throw new Error(`create task: ${res.status} ${res.text}`)
    return res.body.id as string
  }
  return {
    service,
    url: service.url,
    dir,
    newTask,
    stop: async () => {
      await service.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/**
 * The built gateway of the calling test file: started before its tests, stopped after them. What
 * it returns reads the started one (so a test file writes `const gw = builtGatewayOfFile()` at its
 * top instead of the start and stop hooks).
 */
export const builtGatewayOfFile = (env: Record<string, string> = {}): BuiltGateway => {
  let started: BuiltGateway | undefined
  beforeAll(async () => {
    started = await startGateway(env)
  }, 60_000)
  afterAll(async () => {
    await started?.stop()
  })
  const gateway = () => {
    if (started === undefined) throw new Error("the file's gateway has not started")
    return started
  }
  return {
    get service() {
      return gateway().service
    },
    get url() {
      return gateway().url
    },
    get dir() {
      return gateway().dir
    },
    newTask: (workflowId) => gateway().newTask(workflowId),
    stop: () => gateway().stop()
  }
}

/** Milliseconds one GET /v1/health takes (and its status). */
export const healthLatency = async (url: string): Promise<{ ms: number; status: number }> => {
  const t = performance.now()
  const res = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(60_000) })
  await res.arrayBuffer()
  return { ms: performance.now() - t, status: res.status }
}

/** An answer read whole: its bytes, their text, and the JSON they hold (undefined when not JSON). */
export interface OwnConnectionAnswer {
  readonly status: number
  readonly bytes: Buffer
  readonly text: string
  readonly body: any
}

/**
 * One request to `gw` on a new connection of its own (the tests' shared fetch pool reuses
 * kept-alive connections, which the gateway may close just as a request starts on one when either
 * loop is busy). A string or Buffer body is sent as it is (JSON, not re-serialized), its length
 * declared. `cutAt`: only that many bytes of the body are sent, then the connection is destroyed
 * (the answer is then status 0). A connection error fails with the gateway's last output: a
 * connection it cut tells why only there.
 */
export const callOnOwnConnection = (gw: BuiltGateway, method: string, path: string, text?: Buffer | string, cutAt?: number) =>
  new Promise<OwnConnectionAnswer>((resolve, reject) => {
    // Encoded before connecting: the gateway closes a connection that sends nothing for 2 s
    // (SVC_FIRST_BYTE_TIMEOUT_MS), and encoding 40 MiB on a starved core can take that long.
    const body = typeof text === "string" ? Buffer.from(text, "utf8") : text
    const headers = body === undefined ? {} : { "content-type": "application/json", "content-length": body.length }
    const req = request(`${gw.url}${path}`, { method, agent: false, headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        const bytes = Buffer.concat(chunks)
        const text = bytes.toString("utf8")
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {
          parsed = undefined
        }
        resolve({ status: res.statusCode!, bytes, text, body: parsed })
      })
      res.on("error", reject)
    })
    if (cutAt !== undefined && body !== undefined) {
      req.on("error", () => resolve({ status: 0, bytes: Buffer.alloc(0), text: "", body: undefined }))
      req.write(body.subarray(0, cutAt), () => setTimeout(() => req.destroy(), 20))
      return
    }
    req.on("error", (e) => reject(new Error(`${method} ${path}: ${e.message}; gateway output: ${gw.service.output().slice(-1500)}`)))
    req.end(body)
  })
