/**
 * A large JSON body (from 256 KiB) is parsed on one turn of the event loop and checked on the
 * next (src/http/input/jsonInput.ts), and the checks skip frames for values that cannot have a
 * problem. Every rule still holds there, naming the same path as for a small body, and a clean
 * large batch is stored whole. On the built process.
 */
import { describe, expect, it } from "vitest"
import { builtGatewayOfFile } from "../files/builtGateway.js"

const gw = builtGatewayOfFile()

/** An ingest batch of about `bytes` bytes, `bad` spliced into the data of the event at `at`. */
const batch = (bytes: number, at: number, bad: string | undefined): string => {
  const events: Array<string> = []
  for (let i = 0, size = 0; size < bytes; i++) {
    const row = `{"data":{"n":${i},"name":"row ${i}","tags":["a","b"],"ok":true,"none":null${i === at && bad !== undefined ? `,${bad}` : ""}}}`
    events.push(row)
    size += row.length + 1
  }
  return `{"kind":"big","events":[${events.join(",")}]}`
}

const ingest = async (taskId: string, body: string) => {
  const res = await fetch(`${gw.url}/v1/tasks/${taskId}/data/ingest`, { method: "POST", headers: { "content-type": "application/json" }, body })
  return { status: res.status, body: await res.json() as { message?: string } & Array<unknown> }
}

describe("a large JSON body's checks", () => {
  const cases: ReadonlyArray<readonly [string, string, RegExp]> = [
    ["a NUL in a string", `"note":"a\\u0000b"`, /^events\[3000\]\.data\.note: contains a NUL character/],
    ["a NUL in a key", `"k\\u0000":1`, /^events\[3000\]\.data\["k\\u0000"\]: the key contains a NUL character/],
    ["a lone surrogate", `"note":"\\ud800x"`, /^events\[3000\]\.data\.note: contains an unpaired UTF-16 surrogate/],
    ["a __proto__ key", `"__proto__":{"x":1}`, /^events\[3000\]\.data\.__proto__: the key "__proto__" is not allowed/],
    ["nesting past the limit", `"deep":${"[".repeat(70)}${"]".repeat(70)}`, /^events\[3000\]\.data\.deep(\[0\])+: JSON nesting deeper than 64 levels/],
    ["an inexact number", `"big":9007199254740993`, /^events\[3000\]\.data\.big: the number 9007199254740993 cannot be stored exactly/]
  ]
  for (const [what, bad, message] of cases) {
    it(`refuses ${what} deep in a 600 KB batch, naming where`, async () => {
      const taskId = await gw.newTask()
      const res = await ingest(taskId, batch(600 * 1024, 3000, bad))
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400)
      expect(res.body.message).toMatch(message)
    })
  }

  it("stores a clean 600 KB batch whole, and a good surrogate pair is no problem", async () => {
    const taskId = await gw.newTask()
    const res = await ingest(taskId, batch(600 * 1024, 10, `"emoji":"\\ud83d\\ude00 é"`))
    expect(res.status).toBe(201)
    expect(res.body.length).toBeGreaterThan(5000)
  })
})
