/**
 * Large uploads on the built process: a multi-MiB file is decoded in slices
 * with turns of the event loop between them (src/files/base64.ts); what is stored and served
 * must still be the sent bytes exactly, and a flaw anywhere in the base64 the same 400.
 */
import { createHash, randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { builtGatewayOfFile } from "./builtGateway.js"

const gw = builtGatewayOfFile()

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")

describe("large uploads", { timeout: 120_000 }, () => {
  it("a file of several MiB round-trips byte for byte (each padding length)", async () => {
    const taskId = await gw.newTask()
    for (const size of [9 * 1024 * 1024, 9 * 1024 * 1024 + 1, 9 * 1024 * 1024 + 2]) {
      const bytes = randomBytes(size)
      const res = await http("POST", `${gw.url}/v1/tasks/${taskId}/files`, { source: "s", fileName: "big.bin", data: bytes.toString("base64") })
      expect(res.status, res.text.slice(0, 300)).toBe(201)
      expect(res.body.sizeBytes).toBe(size)
      const got = Buffer.from(await (await fetch(`${gw.url}${res.body.downloadUrl}`)).arrayBuffer())
      expect(got.length).toBe(size)
      expect(sha(got)).toBe(sha(bytes))
    }
  })

  it("a flaw deep inside a large body is a 400 naming the field, and nothing is stored", async () => {
    const taskId = await gw.newTask()
    const b64 = randomBytes(6 * 1024 * 1024).toString("base64")
    for (const [at, ch] of [[1024 * 1024 - 1, "="], [1024 * 1024, " "], [5 * 1024 * 1024 + 7, "-"], [b64.length - 1, "\u0141"]] as const) {
      const res = await http("POST", `${gw.url}/v1/tasks/${taskId}/files`, { source: "s", fileName: "bad.bin", data: b64.slice(0, at) + ch + b64.slice(at + 1) })
      expect(res.status, `${JSON.stringify(ch)} at ${at}`).toBe(400)
      expect(res.body.message).toBe("data: must be strict base64 (A-Z a-z 0-9 + /, padded with =)")
    }
    const list = await http("GET", `${gw.url}/v1/tasks/${taskId}/files`)
    expect(list.body).toEqual([])
  })
})
