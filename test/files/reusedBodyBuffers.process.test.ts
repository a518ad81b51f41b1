/**
 * Large bodies of a declared length are read into reused buffers (src/http/input/bodyBuffers.ts),
 * lent to one body at a time. On the built process, bodies in every pooled size class at once,
 * each on its own connection, with bodies cut off mid-way and refused ones beside them: every
 * upload is stored byte for byte and every event's payload reads back as sent, twice over (the
 * second wave runs on the buffers the first gave back).
 */
import { createHash, randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import { builtGatewayOfFile, callOnOwnConnection } from "./builtGateway.js"

const gw = builtGatewayOfFile({ SVC_MAX_BODY_BYTES: String(16 * 1024 * 1024) })

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")
const KiB = 1024
const MiB = 1024 * KiB

/**
 * One request on a connection of its own, the body's length declared. `cutAt`: only that many
 * bytes of the body are sent, then the connection is destroyed (the answer is then status 0).
 */
const send = (method: string, path: string, body?: Buffer, cutAt?: number) => callOnOwnConnection(gw, method, path, body, cutAt)

const json = (value: unknown, padTo = 0) => {
  const text = JSON.stringify(value)
  // Whitespace after the value is JSON: a body past 256 KiB with a payload under its cap.
  return Buffer.from(text + " ".repeat(Math.max(0, padTo - Buffer.byteLength(text))), "utf8")
}

/** File sizes whose base64 bodies fall in each pooled size class (256 KiB to 4 MiB), at its edges, and past it. */
const FILE_SIZES = [192 * KiB, 200 * KiB, 380 * KiB, 390 * KiB, 760 * KiB, 1 * MiB, 1.5 * MiB, 2.9 * MiB, 3 * MiB, 3.2 * MiB]

describe("large bodies in reused buffers", { timeout: 180_000 }, () => {
  it("uploads of every size at once are stored byte for byte, with cut-off and refused bodies beside them", async () => {
    const taskId = await gw.newTask()
    const path = `/v1/tasks/${taskId}/files`
    for (let wave = 0; wave < 2; wave++) {
      const files = [...FILE_SIZES, ...FILE_SIZES].map((size) => randomBytes(size + wave))
      const bodies = files.map((bytes, i) => json({ source: "s", fileName: `f${wave}-${i}.bin`, data: bytes.toString("base64") }))
      const other = randomBytes(1 * MiB).toString("base64")
      // A raw control character in the literal (malformed JSON), a flaw in the base64, a bad field.
      const refused = [
        json({ source: "s", fileName: "c.bin", data: other.slice(0, 5000) + "\u0001" + other.slice(5001) }),
        json({ source: "s", fileName: "b.bin", data: other.slice(0, 9000) + "*" + other.slice(9001) }),
        json({ source: "", fileName: "e.bin", data: other })
      ]
      const cut = bodies.slice(0, 6).map((b, i) => send("POST", path, b, Math.floor(b.length * (0.2 + i * 0.13))))
      const [stored, refusals] = await Promise.all([
        Promise.all(bodies.map((b) => send("POST", path, b))),
        Promise.all(refused.map((b) => send("POST", path, b))),
        Promise.all(cut)
      ])
      expect(refusals.map((r) => r.status)).toEqual([400, 400, 400])
      for (const [i, up] of stored.entries()) {
        expect(up.status, `wave ${wave} upload ${i}: ${up.bytes.toString("utf8").slice(0, 200)}`).toBe(201)
        expect(up.body.sizeBytes).toBe(files[i]!.length)
      }
      const downloads = await Promise.all(stored.map((up) => send("GET", up.body.downloadUrl)))
      for (const [i, down] of downloads.entries()) {
        expect(down.status).toBe(200)
        expect(sha(down.bytes), `wave ${wave} file ${i} of ${files[i]!.length} bytes`).toBe(sha(files[i]!))
      }
    }
  })

  it("events in other scripts, in bodies past 256 KiB, read back as they were sent", async () => {
    const taskId = await gw.newTask()
    const path = `/v1/tasks/${taskId}/events`
    const scripts = ["Grüße", "Привет", "مرحبا", "你好世界", "🙂🚀", "ＡＢＣ", "e\u0301", "plain"]
    let seq = 1
    for (let wave = 0; wave < 2; wave++) {
      const events = Array.from({ length: 16 }, (_, i) => {
        const word = scripts[i % scripts.length]!
        const text = `${word} ${randomBytes(8).toString("hex")} `.repeat(Math.floor((150 * KiB) / (Buffer.byteLength(word) + 18)))
        return { type: "note", source: `w${i}`, seq: seq++, payload: { text, i, wave } }
      })
      // Bodies of 260 KiB to 1.5 MiB: in the first classes, spaces after the value.
      const answers = await Promise.all(events.map((e, i) => send("POST", path, json(e, 260 * KiB + i * 80 * KiB))))
      for (const [i, a] of answers.entries()) expect(a.status, `event ${i}: ${a.bytes.toString("utf8").slice(0, 200)}`).toBe(200)
      // Every page of the timeline (an answer holds about 1 MiB).
      const items: Array<any> = []
      for (let after: number | undefined;;) {
        const page = await send("GET", `${path}${after === undefined ? "" : `?after=${after}`}`)
        expect(page.status).toBe(200)
        items.push(...page.body.events)
        if (page.body.hasMore !== true) break
        after = page.body.nextAfter
      }
      for (const e of events) {
        const found = items.find((x) => x.source === e.source && x.seq === e.seq)
        expect(found, `${e.source} ${e.seq}`).toBeDefined()
        expect(found.payload).toEqual(e.payload)
      }
    }
  })
})
