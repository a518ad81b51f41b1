/**
 * How long the inexact-number check (src/api/jsonNumbers.ts) holds the event loop on a literal
 * built to be slow: a fraction that rounds to 0 (so its exact value is worked out) with a long run
 * of zeros between two other digits. Trimming that run with a pattern anchored at the end
 * (`/0+$/`) backtracked from every zero, quadratic in the literal's length: a 60,000-digit
 * literal in a 60 KB body held the loop for seconds (100,000 digits: 7 s per look, and the body
 * is looked at twice), and /v1/health waited as long. On the built process.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type BuiltGateway, healthLatency, startGateway } from "../files/builtGateway.js"

let gw: BuiltGateway

beforeAll(async () => {
  gw = await startGateway()
}, 60_000)

afterAll(async () => {
  await gw?.stop()
})

describe("an inexact number built to be slow to judge", () => {
  it("is refused in linear time: 400 naming the path, /v1/health answered meanwhile", async () => {
    const task = await gw.newTask()
    // 0.000…1000…0001: below the smallest float, so it is judged by its exact digits.
    const literal = `0.${"0".repeat(400)}1${"0".repeat(60_000)}1`
    const body = `{"type":"note","source":"numbers","seq":1,"payload":{"tiny":${literal}}}`
    const started = performance.now()
    const posted = fetch(`${gw.url}/v1/tasks/${task}/events`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as { message: string }, ms: performance.now() - started }))
    // Sent while the body is being judged.
    await new Promise((resolve) => setTimeout(resolve, 50))
    const health = await healthLatency(gw.url)
    const res = await posted
    expect(res.status).toBe(400)
    expect(res.body.message.startsWith("payload.tiny: the number 0.000")).toBe(true)
    expect(res.ms).toBeLessThan(1000)
    expect(health.status).toBe(200)
    expect(health.ms).toBeLessThan(1000)
  }, 60_000)
})
