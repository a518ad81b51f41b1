/**
 * Long composite task ids in other scripts, through a gateway over a workspace service: the
 * gateway puts a task id in the service's paths, percent-encoded (3 characters a byte), so 2,048
 * CJK characters made a path of 18 KiB, which the service refused with 431, answered as a 502
 * (retried first). A task id is now bounded in UTF-8 bytes too (2,048): past it a 400 names the
 * field; up to it nothing answers 5xx, in a path or in a body.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { exampleFixture } from "../support/gateway.js"
import { EXPENSE_TASK } from "../support/world.js"
import { type RemoteGateways, startRemoteGateways } from "../timeline/support.js"

/** The bound in UTF-8 bytes (src/api/ids.ts TASK_ID_MAX_BYTES), as the contract states it. */
const TASK_ID_MAX_BYTES = 2048

const ADMIN_TOKEN = "long-task-ids-remote-admin-token-0123456789"
let gateways: RemoteGateways | undefined

beforeAll(async () => {
  gateways = await startRemoteGateways(ADMIN_TOKEN, exampleFixture)
}, 90_000)

afterAll(async () => {
  await gateways?.stop()
})

/** A composite child id of EXPENSE_TASK of exactly `bytes` UTF-8 bytes, its segments of `char`. */
const compositeOf = (char: string, bytes: number): string => {
  const head = `${EXPENSE_TASK}:`
  const per = Buffer.byteLength(char)
  const room = bytes - head.length - 2 // ":x"
  const step = char.repeat(Math.floor(room / per)) + "s".repeat(room % per)
  const id = `${head}${step}:x`
  expect(Buffer.byteLength(id)).toBe(bytes)
  return id
}

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${gateways!.remote.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: res.status, body: await res.json() as { message?: string } }
}

const writes = (signalTaskId: string) => [
  [`/v1/tasks/${EXPENSE_TASK}/files`, {
    source: "receipts",
    fileName: "r.pdf",
    data: Buffer.from("%PDF-1.4 receipt").toString("base64"),
    signalTaskId,
    signalName: "file_submitted"
  }],
  [`/v1/tasks/${EXPENSE_TASK}/files/ingest`, {
    source: "receipts",
    fileRef: { provider: "inline_base64", data: Buffer.from("%PDF-1.4 receipt").toString("base64") },
    fileName: "r.pdf",
    signalTaskId,
    signalName: "file_submitted"
  }],
  [`/v1/tasks/${EXPENSE_TASK}/data/ingest`, { data: { amount: 1 }, signalTaskId, signalName: "data_ready" }]
] as const

// Two bytes (Cyrillic), three (CJK, Devanagari), four (emoji: two UTF-16 units each).
const SCRIPTS = ["ж", "步", "क", "😀"]

describe("a long composite task id in other scripts, over a workspace service", () => {
  it("past 2,048 UTF-8 bytes: a 400 naming signalTaskId for every write, taskId in a path", async () => {
    // Just past it, and as far past as 2,048 UTF-16 units go (before: 201 for the first, a 502 for
    // the CJK and Devanagari ones' 18 KiB paths).
    const cases = SCRIPTS.flatMap((char) => {
      const units = Math.floor((2048 - EXPENSE_TASK.length - 3) / char.length)
      return [compositeOf(char, TASK_ID_MAX_BYTES + 1), `${EXPENSE_TASK}:${char.repeat(units)}:x`]
    })
    for (const id of cases) {
      const char = [...id.slice(37)][0]!
      for (const [path, body] of writes(id)) {
        const res = await post(path, body)
        expect([res.status, res.body.message], `${char} ${path}`).toEqual([400, "signalTaskId: must be at most 2048 bytes in UTF-8"])
      }
      // In a path: a 400 naming taskId, or the 431 of a request line past the 16 KiB of headers.
      const path = `/v1/tasks/${encodeURIComponent(id)}/ui`
      const read = await fetch(`${gateways!.remote.url}${path}`)
      expect([read.status, ((await read.json()) as { message: string }).message], char).toEqual(
        path.length > 16_000
          ? [431, "Request headers exceed the size limit"]
          : [400, "taskId: must be at most 2048 bytes in UTF-8"]
      )
    }
  })

  it("up to 2,048 UTF-8 bytes: no 5xx, in a path or as a write's signal task", async () => {
    for (const char of SCRIPTS) {
      const id = compositeOf(char, TASK_ID_MAX_BYTES)
      for (const [path, body] of writes(id)) {
        const res = await post(path, body)
        expect(res.status, `${char} ${path}: ${res.body.message}`).toBeLessThan(500)
      }
      for (const suffix of ["/ui", "/events", "/files"]) {
        const read = await fetch(`${gateways!.remote.url}/v1/tasks/${encodeURIComponent(id)}${suffix}`)
        expect(read.status, `${char} ${suffix}`).toBeLessThan(500)
        await read.body?.cancel()
      }
    }
  })
})
