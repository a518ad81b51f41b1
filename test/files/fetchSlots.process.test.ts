/**
 * Found by an attack pass: the bytes the gateway fetches itself (URL and local
 * ingest) are not request bodies, so the body budget did not count them: 16 concurrent ingests of
 * a 45 MB file took RSS to 1.27 GB. Now ingests that fetch hold one of SVC_INGEST_FETCHES_AT_ONCE
 * slots from the fetch until the file is persisted; the others wait for a slot. On the built
 * process with one slot: a remote source never sees two of the gateway's fetches at once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { type BuiltGateway, startGateway } from "./builtGateway.js"
import { startServer, type TestServer } from "./servers.js"

let gw: BuiltGateway
let source: TestServer
let open = 0
let most = 0

beforeAll(async () => {
  source = await startServer((_req, res) => {
    open++
    most = Math.max(most, open)
    // A slow source: each fetch takes half a second.
    setTimeout(() => {
      res.end("a,b\n1,2\n")
      open--
    }, 500)
  })
  gw = await startGateway({ SVC_INGEST_URL_ALLOW: `127.0.0.1:${source.port}`, SVC_INGEST_FETCHES_AT_ONCE: "1" })
}, 60_000)

afterAll(async () => {
  await gw?.stop()
  await source?.close()
})

describe("fetch slots (SVC_INGEST_FETCHES_AT_ONCE, built process)", () => {
  it("with one slot, four concurrent URL ingests fetch one after the other, and all are stored", async () => {
    const task = await gw.newTask()
    const ingest = (i: number) =>
      http("POST", `${gw.url}/v1/tasks/${task}/files/ingest`, {
        source: "statements",
        fileName: `s${i}.csv`,
        fileRef: { provider: "url", url: source.url(`/s${i}.csv`) }
      })
    const answers = await Promise.all([0, 1, 2, 3].map(ingest))
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201])
    expect(source.requests).toHaveLength(4)
    expect(most).toBe(1)
  }, 30_000)
})
