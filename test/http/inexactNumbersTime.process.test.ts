/**
 * How long the inexact-number check (src/api/jsonNumbers.ts) holds the event loop on a literal
 * built to be slow: a fraction that rounds to 0 (so its exact value is worked out) with a long run
 * of zeros between two other digits. Trimming that run with a pattern anchored at the end
 * (`/0+$/`) backtracked from every zero, quadratic in the literal's length: a 60,000-digit
 * literal in a 60 KB body held the loop for seconds (100,000 digits: 7 s per look, and the body
 * is looked at twice), and /v1/health waited as long. On the built process.
 */
import { afterAll, describe, expect, it } from "vitest"
import { type BuiltGateway, builtGatewayOfFile, healthLatency, startGateway } from "../files/builtGateway.js"

const gw = builtGatewayOfFile()

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

/** The gateway's longest event-loop delay since /metrics was first read, in ms. */
const loopDelayMaxMs = async (url: string): Promise<number> => {
  const text = await (await fetch(`${url}/metrics`)).text()
  const line = /^nodejs_eventloop_lag_max_seconds(?:\{[^}]*\})? (\S+)$/m.exec(text)
  if (line === null) throw new Error("/metrics has no nodejs_eventloop_lag_max_seconds")
  return Number(line[1]) * 1000
}

/**
 * A large upload with one inexact number: where the number is was found by decoding and parsing
 * the whole body a second time (its base64 too), on the event loop: a 480 MB body held it 3 s
 * (0.27 s without the number), 200 MB well over a second. The second parse now leaves the long
 * strings out (src/http/input/jsonLongStrings.ts textWithoutLongStrings); what that saves is
 * measured in CPU in test/http/inexactNumberSecondParse.test.ts (later changes made the whole
 * second parse cheaper: on this process 200 MB held the loop 250-360 ms with it, 60-95 ms without).
 *
 * Here, on the built process: the answer, /v1/health answered throughout, and the gateway's own
 * event-loop delay (/metrics' maximum since the first scrape) never a second. Not /v1/health's
 * latency as this process sees it: this process writes the 200 MB body too, so that latency
 * holds this process's own stalls, and on a loaded machine (two test runs at once, load average
 * 6) health waited 1.5 s here.
 */
describe("a large upload with an inexact number", () => {
  let big: BuiltGateway | undefined

  afterAll(async () => {
    await big?.stop()
  })

  it("is refused naming the path without holding the event loop for the body's second parse", async () => {
    // This process writes the 200 MB body itself and, on a loaded machine, may stall seconds
    // between taking a connection and sending on it: once the connection was closed under it
    // with nothing answered ("other side closed", only the headers written). The first-byte and
    // keep-alive limits are not what this test is about, so they are made long here.
    big = await startGateway({
      SVC_MAX_BODY_BYTES: String(256 * 1024 * 1024),
      SVC_FIRST_BYTE_TIMEOUT_MS: "9000",
      SVC_KEEP_ALIVE_TIMEOUT_MS: "60000"
    })
    const gateway = big
    const task = await gateway.newTask()
    const head = Buffer.from(`{"source":"s","fileName":"a.bin","fileRef":{"provider":"inline_base64","n":9007199254740993,"data":"`)
    const tail = Buffer.from(`"}}`)
    const body = Buffer.alloc(head.length + 200 * 1024 * 1024 + tail.length, 0x41)
    head.copy(body, 0)
    tail.copy(body, body.length - tail.length)
    // The first scrape starts the delay's histogram: what it reports afterwards is this upload's.
    expect((await fetch(`${gateway.url}/metrics`)).status).toBe(200)
    let done = false
    const posted = fetch(`${gateway.url}/v1/tasks/${task}/files/ingest`, { method: "POST", headers: { "content-type": "application/json" }, body })
      .then(async (res) => ({ status: res.status, body: (await res.json()) as { message: string } }))
      // A failure says what the gateway logged (the connection's end is in its lines).
      .catch((e: unknown) => {
        throw new Error(`${String(e)} (${String((e as { cause?: unknown }).cause)}); the gateway's log:\n${gateway.service.output().slice(-3000)}`)
      })
      .finally(() => {
        done = true
      })
    // /v1/health asked again and again while the body is sent, scanned and refused.
    let worst = 0
    while (!done) {
      const health = await healthLatency(gateway.url)
      expect(health.status).toBe(200)
      worst = Math.max(worst, health.ms)
    }
    const res = await posted
    expect(res.status).toBe(400)
    expect(res.body.message.startsWith("fileRef.n: the number 9007199254740993 cannot be stored exactly"), res.body.message).toBe(true)
    const lagMax = await loopDelayMaxMs(gateway.url)
    expect(lagMax, `the gateway's loop was held ${lagMax.toFixed(0)} ms (health waited at most ${worst.toFixed(0)} ms here)`).toBeLessThan(1000)
  }, 120_000)
})
