/**
 * A gateway in front of a workspace service (SVC_WORKSPACE_URL) whose own body cap is lower than
 * the gateway's: a file or a batch the gateway takes but the service refuses is the client's 413
 * with the service's limit, sent once (not a 502, not retried as if the service had failed).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { randomBytes } from "node:crypto"
import { exampleFixture } from "../support/gateway.js"
import { EXPENSE_TASK } from "../support/world.js"
import { http } from "../support/process.js"
import { type RemoteGateways, startRemoteGateways } from "../timeline/support.js"

const ADMIN_TOKEN = "store-body-cap-admin-token-0123456789"
const STORE_CAP = 1024 * 1024

let gateways: RemoteGateways | undefined

beforeAll(async () => {
  gateways = await startRemoteGateways(ADMIN_TOKEN, exampleFixture, { SVC_MAX_BODY_BYTES: String(8 * STORE_CAP) }, {
    SVC_MAX_BODY_BYTES: String(STORE_CAP)
  })
}, 90_000)

afterAll(async () => {
  await gateways?.stop()
})

const rawUpload = (bytes: Uint8Array, fileName: string) =>
  fetch(`${gateways!.remote.url}/v1/tasks/${EXPENSE_TASK}/files/raw?source=upload&fileName=${fileName}`, {
    method: "POST",
    headers: { "content-type": "application/octet-stream", "x-svc-upload": "raw" },
    body: bytes
  })

/** Lines of the front gateway's log that say a workspace call failed (each a retried attempt). */
const failedCalls = () => gateways!.remote.output().split("\n").filter((l) => l.includes("workspace call failed")).length

describe("a body the workspace service refuses as too large", () => {
  it("a raw upload: 413 in the error shape naming the service's limit, one attempt, nothing stored", async () => {
    const before = failedCalls()
    const res = await rawUpload(randomBytes(2 * STORE_CAP), "big.bin")
    const body = await res.json() as { statusCode: number; message: string; error: string }
    expect(res.status, JSON.stringify(body)).toBe(413)
    expect(body).toMatchObject({ statusCode: 413, error: "Payload Too Large" })
    expect(body.message).toContain(String(STORE_CAP))
    // Whose limit it is: not the gateway's own SVC_MAX_BODY_BYTES, which the client can read.
    expect(body.message).toMatch(/^The workspace service refuses it: /)
    expect(failedCalls() - before).toBe(0)
    const files = await http("GET", `${gateways!.remote.url}/v1/tasks/${EXPENSE_TASK}/files`)
    expect(files.status).toBe(200)
    expect(JSON.stringify(files.body)).not.toContain("big.bin")
  })

  it("a data batch: 413 likewise; a smaller file and batch still go through", async () => {
    const note = "x".repeat(2000)
    const events = Array.from({ length: 800 }, (_, n) => ({ data: { n, note } }))
    const big = await http("POST", `${gateways!.remote.url}/v1/tasks/${EXPENSE_TASK}/data/ingest`, { kind: "expense", events })
    expect(big.status, big.text).toBe(413)
    expect(big.body).toMatchObject({ statusCode: 413, error: "Payload Too Large" })

    const small = await rawUpload(randomBytes(STORE_CAP / 4), "small.bin")
    expect(small.status, await small.clone().text()).toBe(201)
    const batch = await http("POST", `${gateways!.remote.url}/v1/tasks/${EXPENSE_TASK}/data/ingest`, { kind: "expense", events: events.slice(0, 10) })
    expect(batch.status, batch.text).toBe(201)
  })
})
