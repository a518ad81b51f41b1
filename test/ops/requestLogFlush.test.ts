/**
 * The request log as shipped (dist/main.js, stdout a pipe): lines are written in batches
 * (src/observability/logging.ts), so a SIGTERM right after the last answer must still find every
 * line written, whole and in the order the requests were answered; and the request ids the
 * gateway makes are distinct version 4 UUIDs, echoed and logged.
 */
import { Agent, request } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningService, startBuilt } from "../support/process.js"

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** GET `path` on a keep-alive agent; resolves with the answer's status and x-request-id. */
const get = (agent: Agent, url: string, path: string, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; id: string }>((resolve, reject) => {
    const req = request(`${url}${path}`, { agent, headers }, (res) => {
      res.resume()
      res.on("end", () => resolve({ status: res.statusCode!, id: String(res.headers["x-request-id"]) }))
    })
    req.on("error", reject)
    req.end()
  })

describe("request lines under SIGTERM (built process)", () => {
  let gw: RunningService
  beforeAll(async () => {
    gw = await startBuilt({})
  }, 60_000)
  afterAll(() => gw.stop())

  it("writes every line, whole and in order, before the process exits", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const sent: Array<string> = []
    for (let i = 0; i < 400; i++) {
      // Every fourth without an id: the gateway makes one.
      const edge = i % 4 === 0 ? undefined : `flush-${i}`
      const answer = await get(agent, gw.url, i % 3 === 0 ? "/v1/health" : "/v1/no-such-route", edge === undefined ? {} : { "x-request-id": edge })
      if (edge === undefined) expect(answer.id).toMatch(V4)
      else expect(answer.id).toBe(edge)
      sent.push(answer.id)
    }
    agent.destroy()
    expect(new Set(sent).size).toBe(sent.length)
    // At once after the last answer, with lines still in the writer's buffer.
    gw.kill("SIGTERM")
    const exit = await gw.exited
    expect(exit.code).toBe(0)
    const logged = gw.output().split("\n").filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l) as {
      requestId: string
      status: number
    })
    const ours = logged.filter((l) => sent.includes(l.requestId)).map((l) => l.requestId)
    expect(ours).toEqual(sent)
  }, 60_000)
})
