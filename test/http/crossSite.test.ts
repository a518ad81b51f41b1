/**
 * No cross-site writes, without a browser: raw requests to the built process
 * (`npm start`) carrying exactly the headers a browser would (Sec-Fetch-Site, Origin, Referer,
 * no Content-Type), on /v1, /mcp and the GL connect page's completion. Refused writes change
 * nothing; same-origin, allowed-origin and non-browser writes still work. The Chromium test
 * (test/console/crossSite.test.ts) does the same with a real page on another site.
 */
import { mkdtempSync, rmSync } from "node:fs"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { crossSiteRefusal, hasBody } from "../../src/http/input/crossSite.js"
import { originAllowed } from "../../src/http/input/cors.js"
import { type RunningService, startBuilt } from "../support/process.js"
import { type NodeResponse, requestTo } from "./support.js"

const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const REVIEW_TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"
const UPLOAD_TASK = "1f3a5c7e-9b2d-4f60-8a1c-3e5b7d9f1a20"
const ROW_A = "0349944d-fb03-40cf-a73a-21b10c2a61e9"
const ROW_B = "7a9c1e35-6b8d-4f0a-8c2e-5d7f9b1d3f86"
const APP = "https://app.example.com"
const EVIL = "https://evil.example"
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

const JSON_TYPE = { "content-type": "application/json" }
const approve = JSON.stringify({ type: "approved" })
const upload = JSON.stringify({
  source: "receipts",
  fileName: "r.png",
  contentType: "image/png",
  data: PNG,
  signalTaskId: UPLOAD_TASK,
  signalName: "file_submitted"
})
const ingest = JSON.stringify({
  source: "receipts",
  fileName: "r.png",
  fileRef: { provider: "inline_base64", data: PNG },
  signalTaskId: UPLOAD_TASK,
  signalName: "file_submitted"
})
const create = JSON.stringify({ workflowId: "legacy-import" })
const mcp = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })

/** The writes a hostile page aims at, each with the body that would have done harm. */
const WRITES: ReadonlyArray<readonly [string, string, string | undefined]> = [
  ["POST", `/v1/tasks/${REVIEW_TASK}/action`, approve],
  ["POST", `/v1/tasks/${UPLOAD_TASK}/files`, upload],
  ["POST", `/v1/tasks/${UPLOAD_TASK}/files/ingest`, ingest],
  ["POST", `/v1/entities/${ACME_US}/tasks`, create],
  ["POST", `/v1/subledgers/expenses/${ROW_A}/reject`, undefined],
  ["PATCH", `/v1/subledgers/expenses/${ROW_A}`, JSON.stringify({ field: "merchant", value: "Evil Corp" })],
  ["DELETE", "/v1/gl", undefined],
  ["POST", "/mcp", mcp]
]

let dir: string
let gw: RunningService | undefined
let port: number
let own: string

const send = (method: string, path: string, body: string | undefined, headers: Record<string, string> = {}) =>
  requestTo(port, method, path, {
    headers: { ...(body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) }), ...headers },
    ...(body === undefined ? {} : { body })
  })

/** What the API shows of everything a write above could change. */
const state = async () => {
  const paths = [
    `/v1/tasks/${REVIEW_TASK}/ui`,
    `/v1/tasks/${UPLOAD_TASK}/ui`,
    `/v1/tasks/${UPLOAD_TASK}/files`,
    `/v1/entities/${ACME_US}/tasks`,
    `/v1/tasks/${REVIEW_TASK}/events`,
    "/v1/gl/status"
  ]
  const answers = await Promise.all(paths.map((p) => send("GET", p, undefined)))
  for (const a of answers) expect(a.status).toBe(200)
  return answers.map((a) => a.body)
}

const expectRefused = (res: NodeResponse, status: 403 | 415, what: string) => {
  expect(res.status, `${what}: ${res.text}`).toBe(status)
  expect(Object.keys(res.body).sort()).toEqual(["error", "message", "statusCode"])
  expect(res.body.statusCode).toBe(status)
  expect(res.body.error).toBe(status === 403 ? "Forbidden" : "Unsupported Media Type")
  expect(res.body.message).toMatch(status === 403 ? /^Cross-site write refused/ : /application\/json/)
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "cross-site-"))
  gw = await startBuilt({ SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`, SVC_CORS_ORIGINS: APP })
  port = Number(new URL(gw.url).port)
  own = gw.url
}, 60_000)
afterAll(async () => {
  await gw?.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe("the decision (crossSiteRefusal)", () => {
  const allows = originAllowed({ origins: [APP], credentials: false })
  const host = { host: "gw.example:8080" }
  const cases: ReadonlyArray<readonly [string, string, Record<string, string>, boolean]> = [
    ["curl / CLI / typed client: no fetch metadata, no Origin", "POST", {}, true],
    ["same-origin page", "POST", { "sec-fetch-site": "same-origin", origin: "http://gw.example:8080" }, true],
    ["user navigation", "POST", { "sec-fetch-site": "none" }, true],
    ["cross-site page", "POST", { "sec-fetch-site": "cross-site", origin: EVIL }, false],
    ["cross-site, listed origin", "POST", { "sec-fetch-site": "cross-site", origin: APP }, true],
    ["cross-site, no Origin", "DELETE", { "sec-fetch-site": "cross-site" }, false],
    ["cross-site, Origin null", "POST", { "sec-fetch-site": "cross-site", origin: "null" }, false],
    ["same-site sibling", "PATCH", { "sec-fetch-site": "same-site", origin: "https://other.gw.example" }, false],
    ["unknown fetch-site value", "POST", { "sec-fetch-site": "whatever", origin: EVIL }, false],
    ["case and spaces", "POST", { "sec-fetch-site": " Cross-Site ", origin: EVIL }, false],
    ["old browser, own origin", "POST", { origin: "http://gw.example:8080" }, true],
    ["old browser, own origin, default port", "POST", { origin: "http://gw.example" }, false],
    ["old browser, other origin", "POST", { origin: EVIL }, false],
    ["old browser, other port", "POST", { origin: "http://gw.example:9090" }, false],
    ["old browser, listed origin", "POST", { origin: APP }, true],
    ["old browser, Origin null", "POST", { origin: "null" }, false],
    ["old browser, garbage Origin", "POST", { origin: "::" }, false],
    ["old browser, no Origin, foreign Referer", "POST", { referer: `${EVIL}/page?x` }, false],
    ["old browser, no Origin, own Referer", "POST", { referer: "http://gw.example:8080/#/tasks" }, true],
    ["behind a proxy: X-Forwarded-Host", "POST", { origin: "https://public.example", "x-forwarded-host": "public.example" }, true],
    ["reads are never refused", "GET", { "sec-fetch-site": "cross-site", origin: EVIL }, true],
    ["nor preflights", "OPTIONS", { "sec-fetch-site": "cross-site", origin: EVIL }, true]
  ]
  it.each(cases)("%s", (_name, method, headers, passes) => {
    const refusal = crossSiteRefusal(method, { ...host, ...headers }, allows)
    expect(refusal === undefined, refusal).toBe(passes)
  })

  it("`*` lets every real origin write, never an opaque one", () => {
    const any = originAllowed({ origins: ["*"], credentials: false })
    expect(crossSiteRefusal("POST", { ...host, "sec-fetch-site": "cross-site", origin: EVIL }, any)).toBeUndefined()
    expect(crossSiteRefusal("POST", { ...host, "sec-fetch-site": "cross-site", origin: "null" }, any)).toBeDefined()
  })

  it("a body is declared by Content-Length > 0 or Transfer-Encoding", () => {
    expect(hasBody({})).toBe(false)
    expect(hasBody({ "content-length": "0" })).toBe(false)
    expect(hasBody({ "content-length": "2" })).toBe(true)
    expect(hasBody({ "transfer-encoding": "chunked" })).toBe(true)
  })
})

describe("cross-site writes on the built process", { timeout: 60_000 }, () => {
  it("refuses every write a page on another site (or a sibling subdomain) sends, 403, and nothing changes", async () => {
    const before = await state()
    const browsers: ReadonlyArray<Record<string, string>> = [
      { "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors", origin: EVIL },
      { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", origin: "null" },
      { "sec-fetch-site": "same-site", "sec-fetch-mode": "cors", origin: "http://127.0.0.1:1" },
      { origin: EVIL }, // an older browser: no fetch metadata
      { referer: `${EVIL}/attack.html` } // older still: no Origin either
    ]
    for (const [method, path, body] of WRITES) {
      for (const headers of browsers) {
        // JSON, text/plain and no type alike: the 403 comes first, the body is never looked at.
        for (const type of [JSON_TYPE, { "content-type": "text/plain" }, {}]) {
          const res = await send(method, path, body, { ...headers, ...(body === undefined ? {} : type) })
          expectRefused(res, 403, `${method} ${path} ${JSON.stringify(headers)}`)
        }
      }
    }
    const refused = await send("POST", `/v1/tasks/${REVIEW_TASK}/action`, approve, {
      ...JSON_TYPE,
      "sec-fetch-site": "cross-site",
      origin: EVIL
    })
    expect(refused.body.message).toContain("\"https://evil.example\"")
    expect(refused.body.message).toContain("Sec-Fetch-Site: cross-site")
    expect(refused.body.message).toContain("SVC_CORS_ORIGINS")
    expect(refused.headers["access-control-allow-origin"]).toBeUndefined()
    expect(await state()).toEqual(before)
  })

  it("refuses a body that does not say application/json, 415, on every write route; nothing changes", async () => {
    const before = await state()
    const types: ReadonlyArray<Record<string, string>> = [
      {},
      { "content-type": "text/plain;charset=UTF-8" },
      { "content-type": "application/x-www-form-urlencoded" },
      { "content-type": "multipart/form-data; boundary=x" },
      { "content-type": "application/merge-patch+json" },
      { "content-type": "application/json; charset=latin1" },
      { "content-type": "application/jsonx" },
      { "content-type": "" }
    ]
    for (const [method, path, body] of WRITES) {
      for (const type of types) {
        const res = await send(method, path, body ?? "{}", type)
        expectRefused(res, 415, `${method} ${path} ${JSON.stringify(type)}`)
        expect(res.body.message).toContain(type["content-type"] === undefined ? "no Content-Type" : "got \"")
      }
    }
    expect(await state()).toEqual(before)
  })

  it("a body in a content coding (gzip, br, ...) is a 415 naming it, on every write route; identity passes; nothing changes", async () => {
    const before = await state()
    for (const [method, path, body] of WRITES) {
      for (const coding of ["gzip", "br", "deflate, gzip", "x-unknown"]) {
        const res = await send(method, path, body ?? "{}", { ...JSON_TYPE, "content-encoding": coding })
        expect(res.status, `${method} ${path} ${coding}: ${res.text}`).toBe(415)
        expect(res.body).toEqual({ statusCode: 415, error: "Unsupported Media Type", message: `Content-Encoding "${coding}" is not supported: send the body uncompressed` })
      }
    }
    expect(await state()).toEqual(before)
    // No coding at all, said so: the body is read as it is.
    const identity = await send("POST", `/v1/tasks/${REVIEW_TASK}/events`, JSON.stringify({ type: "note", source: "coding-test", seq: 1, payload: {} }), {
      ...JSON_TYPE,
      "content-encoding": "identity"
    })
    expect(identity.status, identity.text).toBe(200)
    expect(identity.body.ok).toBe(true)
    // A method the path does not take: its 405, whatever the coding.
    expect((await send("PUT", "/v1/entities", "{}", { ...JSON_TYPE, "content-encoding": "gzip" })).status).toBe(405)
  })

  it("a chunked body without a type is a 415 as well, and so is one with a body on a read", async () => {
    const chunked = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, "127.0.0.1")
      let answer = ""
      socket.on("data", (d: Buffer) => (answer += d.toString("latin1")))
      socket.on("error", reject)
      socket.on("close", () => resolve(answer))
      socket.write(
        `POST /v1/tasks/${REVIEW_TASK}/action HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nTransfer-Encoding: chunked\r\n` +
          `Connection: close\r\n\r\n${approve.length.toString(16)}\r\n${approve}\r\n0\r\n\r\n`
      )
    })
    expect(chunked).toMatch(/^HTTP\/1\.1 415 /)
    expect(chunked).toContain("\"error\":\"Unsupported Media Type\"")
    const read = await send("GET", "/v1/entities", "x=1", { "content-type": "application/x-www-form-urlencoded" })
    expectRefused(read, 415, "GET with a form body")
  })

  it("answers before reading the body: a declared body that never arrives still gets its 403 or 415", async () => {
    const answerOf = (head: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, "127.0.0.1")
        let answer = ""
        socket.on("data", (d: Buffer) => {
          answer += d.toString("latin1")
          const at = answer.indexOf("\r\n\r\n")
          const length = /content-length: (\d+)/i.exec(answer)
          if (at !== -1 && length !== null && answer.length - at - 4 >= Number(length[1])) socket.destroy()
        })
        socket.on("error", reject)
        socket.on("close", () => resolve(answer))
        // 10 bytes of a declared 1 MB: the rest is never sent.
        socket.write(`${head}Content-Length: 1000000\r\n\r\n{"type":"a`)
      })
    const line = `POST /v1/tasks/${REVIEW_TASK}/action HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`
    expect(await answerOf(`${line}Content-Type: text/plain\r\n`)).toMatch(/^HTTP\/1\.1 415 /)
    expect(await answerOf(`${line}Content-Type: application/json\r\nSec-Fetch-Site: cross-site\r\nOrigin: ${EVIL}\r\n`))
      .toMatch(/^HTTP\/1\.1 403 /)
  }, 15_000)

  it("reads from another site are answered as before; requests without a body need no type", async () => {
    const read = await send("GET", `/v1/tasks/${REVIEW_TASK}/ui`, undefined, { "sec-fetch-site": "cross-site", origin: EVIL })
    expect(read.status).toBe(200)
    // A form with no fields from this origin: Content-Length 0, a form type, no body to read.
    const reject = await send("POST", `/v1/subledgers/expenses/${ROW_B}/reject`, "", {
      "content-type": "application/x-www-form-urlencoded",
      "content-length": "0",
      "sec-fetch-site": "same-origin",
      origin: own
    })
    expect(reject.status, reject.text).toBe(200)
    expect(reject.body.newStatus).toBe("REJECTED")
  })

  it("writes from this origin, from a listed origin and from non-browser clients still work", async () => {
    // A non-browser client (curl, the CLI, the typed client): no fetch metadata, no Origin.
    const created = await send("POST", `/v1/entities/${ACME_US}/tasks`, create, { "content-type": "APPLICATION/JSON" })
    expect(created.status, created.text).toBe(201)
    // This origin's console in a current browser, and in an old one (Origin only).
    const sameOrigin = await send("POST", `/v1/entities/${ACME_US}/tasks`, create, {
      "content-type": "application/json; charset=utf-8",
      "sec-fetch-site": "same-origin",
      origin: own
    })
    expect(sameOrigin.status, sameOrigin.text).toBe(201)
    const oldBrowser = await send("POST", `/v1/entities/${ACME_US}/tasks`, create, { ...JSON_TYPE, origin: own })
    expect(oldBrowser.status, oldBrowser.text).toBe(201)
    // A listed origin (SVC_CORS_ORIGINS), cross-site: allowed, and it may read the answer.
    const listed = await send("POST", `/v1/tasks/${UPLOAD_TASK}/files`, upload, {
      ...JSON_TYPE,
      "sec-fetch-site": "cross-site",
      "sec-fetch-mode": "cors",
      origin: APP
    })
    expect(listed.status, listed.text).toBe(201)
    expect(listed.headers["access-control-allow-origin"]).toBe(APP)
    // /mcp from a non-browser client gets as far as the agent key check.
    const agent = await send("POST", "/mcp", mcp, { ...JSON_TYPE, accept: "application/json, text/event-stream" })
    expect(agent.status).toBe(401)
  })

  it("the GL connect page's completion is refused from another site and works from its own page", async () => {
    const session = await send("POST", "/v1/gl/connect/session", JSON.stringify({ serviceId: "xero" }), JSON_TYPE)
    expect(session.status, session.text).toBe(200)
    const complete = `/workspace/gl/connect/${session.body.consumerId}/complete`
    const body = JSON.stringify({ service: "xero" })
    expectRefused(await send("POST", complete, body, { ...JSON_TYPE, "sec-fetch-site": "cross-site", origin: EVIL }), 403, "complete")
    expectRefused(await send("POST", complete, body, { "content-type": "text/plain" }), 415, "complete as text")
    const done = await send("POST", complete, body, { ...JSON_TYPE, "sec-fetch-site": "same-origin", origin: own })
    expect(done.status, done.text).toBe(204)
  })
})
