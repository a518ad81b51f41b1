/**
 * CPU per task-board call (50 tasks, 17 KB) in one process, against a fake board served by a
 * child process, 10 calls in flight: the gateway's workspace client (`full`: HttpApiClient, the
 * decode, deadline and retries), Effect's HttpClient on the platform's node:http runner (`get`),
 * the same HttpClient on a runner without the platform's upload fiber and race (`lean`), and a
 * bare `http.get` with `JSON.parse` (`bare`). Where S2's per-list client cost is (PROFILE.md,
 * issue 36's eleventh pass). Run pinned: `taskset -c 1 tsx bench/experiments/s2-client.ts`.
 *
 * Usage: tsx bench/experiments/s2-client.ts [variants, e.g. full,get,lean,bare] [calls per round]
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as HttpClient from "effect/http/HttpClient"
import { fork } from "node:child_process"
import * as http from "node:http"
import { randomUUID } from "node:crypto"
import { HttpWorkspaceClientLive } from "../../src/workspace/http/client.js"
import { WorkspaceClient } from "../../src/upstream/WorkspaceClient.js"
import { NodeHttpIncomingMessage } from "@effect/platform-node/NodeHttpIncomingMessage"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Cookies from "effect/http/Cookies"
import { pipeArguments } from "effect/Pipeable"

class LeanResponse extends NodeHttpIncomingMessage<HttpClientError.HttpClientError> implements HttpClientResponse.HttpClientResponse {
  readonly [HttpClientResponse.TypeId]: typeof HttpClientResponse.TypeId
  constructor(readonly request: HttpClientRequest.HttpClientRequest, source: http.IncomingMessage, readonly url: string) {
    super(source, (cause) => new HttpClientError.HttpClientError({ reason: new HttpClientError.DecodeError({ request, response: this, cause }) }))
    this[HttpClientResponse.TypeId] = HttpClientResponse.TypeId
  }
  get status() { return this.source.statusCode! }
  get upgrade(): any { return Effect.fail(new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request: this.request, description: "not upgraded" }) })) }
  get cookies() { const h = this.source.headers["set-cookie"]; return h ? Cookies.fromSetCookie(h) : Cookies.empty }
  get formData(): any { return Effect.die("no form data") }
  toJSON(): unknown { return { _id: "effect/http/HttpClientResponse", status: this.status } }
  pipe() { return pipeArguments(this, arguments) }
}

/** The lean runner: http.request, the body ended at once, the response as the platform wraps it. */
const leanClient = (agent: http.Agent) => HttpClient.make((request, url, signal) =>
  Effect.callback<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>((resume) => {
    const req = http.request(url, { agent, method: request.method, headers: request.headers, signal })
    const onError = (cause: Error) => resume(Effect.fail(new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, cause }) })))
    req.on("error", onError)
    req.once("response", (res) => { resume(Effect.succeed(new LeanResponse(request, res, url.href))) })
    const body = request.body
    req.end(body._tag === "Uint8Array" || body._tag === "Raw" ? body.body as any : undefined)
    return Effect.sync(() => req.destroy())
  }))


const TENANT = "11111111-1111-4111-8111-111111111111"
const ENTITY = "22222222-2222-4222-8222-222222222222"
if (process.argv[2] === "server") {
  const body = JSON.stringify(Array.from({ length: 50 }, (_, i) => ({ id: randomUUID(), tenantId: TENANT, entityId: ENTITY, workflowId: "wf-" + (i % 3), title: "Task number " + i + " with some title text", status: "RUNNING", priority: "normal", createdAt: new Date(Date.now() - i * 1000).toISOString(), currentStep: "step-a", awaiting: "FILE_UPLOAD" })))
  http.createServer((_, res) => { res.writeHead(200, { "content-type": "application/json" }); res.end(body) }).listen(0, "127.0.0.1", function (this: http.Server) { process.send!((this.address() as any).port) })
} else {
  const child = fork(new URL(import.meta.url).pathname, ["server"], { execArgv: ["--import", "tsx"] })
  const port: number = await new Promise((r) => child.once("message", r as any))
  const base = `http://127.0.0.1:${port}`
  const path = `/workspace/tenants/${TENANT}/entities/${ENTITY}/board`
  const N = Number(process.argv[3] ?? 3000), C = 10
  const results: Record<string, number[]> = {}
  const measure = async (name: string, one: () => Promise<unknown>) => {
    for (let i = 0; i < 300; i++) await one()
    const t0 = process.cpuUsage()
    let next = 0
    await Promise.all(Array.from({ length: C }, async () => { while (next++ < N) await one() }))
    const d = process.cpuUsage(t0)
    ;(results[name] ??= []).push((d.user + d.system) / N)
  }
  const full = ManagedRuntime.make(HttpWorkspaceClientLive(base, { timeoutMs: 10_000, retries: 2 }))
  const board = Effect.flatMap(WorkspaceClient, (w) => w.listTaskBoard!(TENANT, ENTITY, undefined))
  const first = await full.runPromise(board)
  if (first.length !== 50) throw new Error("bad board")
  const getRt = ManagedRuntime.make(NodeHttpClient.layerNodeHttpOptions({ keepAlive: true }))
  const get = Effect.scoped(Effect.flatMap(HttpClient.HttpClient, (c) => Effect.flatMap(c.get(base + path), (r) => r.json)))
  const agent = new http.Agent({ keepAlive: true })
  const lean = leanClient(new http.Agent({ keepAlive: true }))
  const leanGet = Effect.scoped(Effect.flatMap(lean.get(base + path), (r) => r.json))
  const bare = () => new Promise((resolve, reject) => http.get(base + path, { agent }, (res) => { const cs: Buffer[] = []; res.on("data", (c) => cs.push(c)); res.on("end", () => resolve(JSON.parse(Buffer.concat(cs).toString()))) }).on("error", reject))
  const variants = (process.argv[2] ?? "full,get,bare").split(",")
  for (let round = 0; round < 4; round++) for (const k of variants) {
    if (k === "full") await measure("client listTaskBoard", () => full.runPromise(board))
    if (k === "get") await measure("HttpClient.get + json", () => getRt.runPromise(get as any))
    if (k === "lean") await measure("lean runner get + json", () => Effect.runPromise(leanGet as any))
    if (k === "bare") await measure("bare http.get", bare)
  }
  for (const [k, v] of Object.entries(results)) console.log(k.padEnd(24), v.map((x) => x.toFixed(0)).join(" "), "us CPU/call; median", [...v].sort((a, b) => a - b)[v.length >> 1]!.toFixed(0))
  child.kill(); process.exit(0)
}
