/**
 * On the built process: a URL ingest whose source redirects to another origin
 * forwards only headers known to be safe there (Accept, Accept-Encoding, Accept-Language, Range,
 * User-Agent); every other caller header, credential-like or not, stays with the origin the
 * caller named. A same-origin redirect keeps them all.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { type BuiltGateway, startGateway } from "./builtGateway.js"
import { startServer, type TestServer } from "./servers.js"

let gw: BuiltGateway
let named: TestServer // the origin the caller names: redirects
let elsewhere: TestServer // another origin: records what reaches it

const CALLER_HEADERS: Record<string, string> = {
  Authorization: "Bearer s3cret",
  Cookie: "session=1",
  "X-Api-Key": "k-123",
  "X-Amz-Security-Token": "tok",
  "Private-Token": "gitlab",
  "X-Auth-Token": "t",
  "X-Csrf-Token": "c",
  "X-Trace": "t1",
  Accept: "text/csv",
  "Accept-Language": "en",
  "Accept-Encoding": "identity",
  Range: "bytes=0-",
  "User-Agent": "caller/1"
}
const SAFE = ["accept", "accept-encoding", "accept-language", "range", "user-agent"]

beforeAll(async () => {
  elsewhere = await startServer((_req, res) => res.end("landed"))
  named = await startServer((req, res) => {
    if (req.url === "/cross") res.writeHead(302, { location: elsewhere.url("/file.csv") })
    else if (req.url === "/same") res.writeHead(302, { location: "/file.csv" })
    else res.writeHead(200)
    res.end()
  })
  gw = await startGateway({ SVC_INGEST_URL_ALLOW: `127.0.0.1:${named.port},127.0.0.1:${elsewhere.port}` })
}, 60_000)

afterAll(async () => {
  await gw?.stop()
  await Promise.all([named?.close(), elsewhere?.close()])
})

describe("URL ingest redirects", { timeout: 60_000 }, () => {
  it("forward only safe headers to another origin", async () => {
    const taskId = await gw.newTask()
    const res = await http("POST", `${gw.url}/v1/tasks/${taskId}/files/ingest`, {
      source: "s",
      fileRef: { provider: "url", url: named.url("/cross"), headers: CALLER_HEADERS }
    })
    expect(res.status, res.text).toBe(201)
    expect(named.requests[0]!.headers.authorization).toBe("Bearer s3cret")
    expect(named.requests[0]!.headers["x-api-key"]).toBe("k-123")
    const seen = elsewhere.requests.at(-1)!.headers
    const forwarded = Object.keys(seen).filter((h) => h !== "host" && h !== "connection").sort()
    expect(forwarded).toEqual(SAFE)
    expect(seen["user-agent"]).toBe("caller/1")
    expect(seen.accept).toBe("text/csv")
  })

  it("keep every caller header on a same-origin redirect", async () => {
    const taskId = await gw.newTask()
    const before = named.requests.length
    const res = await http("POST", `${gw.url}/v1/tasks/${taskId}/files/ingest`, {
      source: "s",
      fileRef: { provider: "url", url: named.url("/same"), headers: CALLER_HEADERS }
    })
    expect(res.status, res.text).toBe(201)
    const landed = named.requests.slice(before).find((r) => r.url === "/file.csv")!.headers
    for (const [name, value] of Object.entries(CALLER_HEADERS)) expect(landed[name.toLowerCase()], name).toBe(value)
  })
})
