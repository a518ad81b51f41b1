/**
 * JSON-RPC batches at /mcp, on the built process: a batch larger than
 * SVC_MCP_MAX_BATCH is refused as the SDK's transport refuses one over its own cap (400 with a
 * JSON-RPC "Invalid Request" error, id null), and maximal batches sent back to back leave
 * /v1/health responsive: the calls of a batch run one after another, each after a turn of the
 * event loop. The bound on health is generous (the machine is shared); perf targets live in bench.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { KEY_A, type McpProcess, postMcp, startMcpProcess } from "./world.js"

const MAX = 20

const batchOf = (n: number, name = "list_assigned_steps") =>
  Array.from({ length: n }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "tools/call", params: { name, arguments: {} } }))

let gw: McpProcess
const auth = { authorization: `Bearer ${KEY_A}` }

beforeAll(async () => {
  gw = await startMcpProcess({}, { built: true })
}, 120_000)

afterAll(async () => {
  await gw?.cleanup()
})

describe("JSON-RPC batches", () => {
  it(`a batch of ${MAX} is answered, one of ${MAX + 1} is a 400 Invalid Request; an empty one too`, async () => {
    const full = await postMcp(gw.url, auth, batchOf(MAX))
    expect(full.status).toBe(200)
    const answers = (await full.json()) as Array<{ id: number; result?: { isError?: boolean } }>
    expect(answers.map((a) => a.id).sort((x, y) => x - y)).toEqual(batchOf(MAX).map((m) => m.id))
    expect(answers.every((a) => a.result !== undefined && a.result.isError !== true)).toBe(true)

    const over = await postMcp(gw.url, auth, batchOf(MAX + 1))
    expect(over.status).toBe(400)
    expect(await over.json()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: `Invalid Request: a batch may hold at most ${MAX} messages (SVC_MCP_MAX_BATCH); this one holds ${MAX + 1}` }
    })
    const empty = await postMcp(gw.url, auth, [])
    expect(empty.status).toBe(400)
    expect(await empty.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } })
  })

  it("health stays responsive while maximal batches are sent", async () => {
    // Warm: the tool server is loaded on the first request to /mcp.
    expect((await postMcp(gw.url, auth, batchOf(MAX))).status).toBe(200)
    const healthLatencies = async (ms: number) => {
      const seen: Array<number> = []
      for (const end = Date.now() + ms; Date.now() < end;) {
        const t = performance.now()
        const res = await fetch(`${gw.url}/v1/health`)
        await res.arrayBuffer()
        expect(res.status).toBe(200)
        seen.push(performance.now() - t)
        await new Promise((r) => setTimeout(r, 10))
      }
      return seen.sort((a, b) => a - b)
    }
    const quantile = (sorted: Array<number>, q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!
    // Health's own tail on this machine right now, without batches: the bound on the tail below
    // stands on it, since on a machine whose cores are busy with other work a few answers wait
    // for a core whatever the gateway does (a clean-clone run with both cores loaded: p99 486 ms).
    // Measured before and after the batches, the larger taken: in a full run the other file
    // running beside this one may start its own load in the middle (a clean-clone run failed
    // the bound with a quiet tail measured before that load came).
    const quietBefore = quantile(await healthLatencies(2000), 0.99)
    const latencies: Array<number> = []
    let sending = true
    const senders = Array.from({ length: 2 }, async () => {
      let sent = 0
      while (sending) {
        const res = await postMcp(gw.url, auth, batchOf(MAX))
        expect(res.status).toBe(200)
        await res.arrayBuffer()
        sent++
      }
      return sent
    })
    latencies.push(...await healthLatencies(5000))
    sending = false
    const sent = (await Promise.all(senders)).reduce((a, b) => a + b, 0)
    const quiet = Math.max(quietBefore, quantile(await healthLatencies(2000), 0.99))
    const at = (q: number) => quantile(latencies, q)
    if (process.env.SHOW_LATENCY) console.log(`health p50 ${at(0.5)} p90 ${at(0.9)} p99 ${at(0.99)} n ${latencies.length}; batches ${sent}; quiet p99 ${quiet}`)
    expect(sent).toBeGreaterThan(1)
    // Before the fix the calls of a batch ran together and health waited for most of a batch
    // (measured here, 2 cores at load 10: p50 127-342 ms, p99 480-590 ms; after: p50 ~10 ms,
    // p99 53-93 ms).
    expect(at(0.5)).toBeLessThan(100)
    expect(at(0.9)).toBeLessThan(250)
    expect(at(0.99)).toBeLessThan(Math.max(250, 2 * quiet + 100))
  }, 60_000)
})
