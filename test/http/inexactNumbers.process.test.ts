/**
 * A number literal JSON.parse cannot keep (an integer past 2^53, a value past the float range or
 * one so small it becomes 0) is refused with a 400 naming its path, instead of being stored, and
 * echoed in the answer, as another number (src/api/jsonNumbers.ts). On the built process: data
 * ingest, a timeline event (small and large bodies), and an agent's append_event over /mcp; and
 * literals that only differ in spelling, or fractions that round to the nearest float, still pass.
 */
import { describe, expect, it } from "vitest"
import { isExactNumberLiteral } from "../../src/api/jsonNumbers.js"
import { builtGatewayOfFile } from "../files/builtGateway.js"

const gw = builtGatewayOfFile()

/** The body sent as it is written (JSON.stringify of a JS number could not carry the literals). */
const post = async (path: string, body: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body })
  const text = await res.text()
  return { status: res.status, text, body: JSON.parse(text) }
}

const timeline = async (taskId: string) => {
  const res = await fetch(`${gw.url}/v1/tasks/${taskId}/events?limit=1000`)
  return ((await res.json()) as { events: Array<{ type: string; payload: unknown }> }).events
}

describe("number literals a float cannot hold", () => {
  it("data ingest: 400 naming the field, nothing stored (was: 201, stored as 9007199254740992)", async () => {
    const task = await gw.newTask()
    const before = await timeline(task)
    const res = await post(`/v1/tasks/${task}/data/ingest`, `{"data":{"accountNumber":9007199254740993}}`)
    expect(res.status).toBe(400)
    expect(res.body.message).toContain("data.accountNumber: the number 9007199254740993 cannot be stored exactly")
    expect(res.body.message).toContain("9007199254740992")
    expect(await timeline(task)).toEqual(before)

    const bulk = await post(`/v1/tasks/${task}/data/ingest`, `{"events":[{"data":{"a":1}},{"data":{"id":-12345678901234567890}}]}`)
    expect(bulk.status).toBe(400)
    expect(bulk.body.message).toMatch(/^events\[1\]\.data\.id: the number -12345678901234567890 /)
  })

  it("timeline events, small and large bodies: 400 naming the path; past the float range and underflow too", async () => {
    const task = await gw.newTask()
    const event = (payload: string) => `{"type":"note","source":"numbers","seq":1,"payload":${payload}}`
    const cases: Array<[string, string]> = [
      [`{"rows":[1,{"n":18014398509481985}]}`, "payload.rows[1].n"],
      [`{"tiny":1e-400}`, "payload.tiny"],
      [`{"huge":1e400}`, "payload.huge"],
      // Past 256 KiB the body is parsed another way (src/http/input/jsonLongStrings.ts).
      [`{"text":"${"x".repeat(300 * 1024)}","n":9007199254740993}`, "payload.n"]
    ]
    for (const [payload, path] of cases) {
      const res = await post(`/v1/tasks/${task}/events`, event(payload))
      expect(res.status, payload.slice(0, 40)).toBe(400)
      expect(res.body.message.startsWith(`${path}: the number `), res.body.message).toBe(true)
    }
    expect((await timeline(task)).filter((e) => e.type === "note")).toEqual([])
  })

  it("the same number spelled otherwise, and fractions rounded to the nearest float, are stored", async () => {
    const task = await gw.newTask()
    const payload = `{"a":9007199254740992,"b":1.0e2,"c":-0,"d":0.10000000000000001,"e":1e21,"f":"9007199254740993","g":5e-324}`
    const res = await post(`/v1/tasks/${task}/events`, `{"type":"note","source":"numbers","seq":1,"payload":${payload}}`)
    expect(res.status).toBe(200)
    const stored = (await timeline(task)).find((e) => e.type === "note")
    // As text: -0 is stored as 0, the same JSON number, which toEqual would tell apart.
    expect(JSON.stringify(stored?.payload)).toBe(JSON.stringify(JSON.parse(payload)))
  })

  it("an agent's append_event over /mcp: 400 naming the argument", async () => {
    const task = await gw.newTask()
    const res = await post(
      "/mcp",
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"append_event","arguments":{"taskId":"${task}","type":"note","payload":{"n":9007199254740993}}}}`,
      { authorization: "Bearer ak_demo_acme_reconciler_key_not_a_secret", accept: "application/json, text/event-stream" }
    )
    expect(res.status).toBe(400)
    expect(res.body.message).toMatch(/^params\.arguments\.payload\.n: the number 9007199254740993 /)
    expect((await timeline(task)).filter((e) => e.type === "note")).toEqual([])
  })

  it("which literals are kept", () => {
    for (const l of ["0", "-0", "0.0e9", "1.0e2", "9007199254740991", "9007199254740992", "1000000000000000000000", "1152921504606847000", "0.10000000000000001", "5e-324", "1.7976931348623157e308"]) {
      expect(isExactNumberLiteral(l), l).toBe(true)
    }
    for (const l of ["9007199254740993", "-9007199254740993", "12345678901234567890", "1152921504606846976", "1e400", "-1e309", "1e-400", "2e-324"]) {
      expect(isExactNumberLiteral(l), l).toBe(false)
    }
  })
})
