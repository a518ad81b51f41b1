/**
 * SVC_ACTOR_HEADER on the built process (`npm start`): the answers a gateway behind an
 * authenticating proxy gives when the proxy's header is missing or malformed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { http, type RunningService, startBuilt } from "../support/process.js"

const HEADER = "x-forwarded-email"
const dirs: Array<string> = []

const start = async (env: Record<string, string>) => {
  const dir = mkdtempSync(join(tmpdir(), "identity-header-"))
  dirs.push(dir)
  return startBuilt({ SVC_DATABASE_URL: pathToFileURL(join(dir, "workspace.db")).href, ...env })
}

/** A request written byte by byte (headers fetch would refuse: control characters, raw non-UTF-8 bytes). */
const rawRequest = (url: string, head: Buffer) =>
  new Promise<{ status: number; body: any }>((resolve, reject) => {
    const { port } = new URL(url)
    const socket = connect(Number(port), "127.0.0.1", () => socket.end(head))
    let data = Buffer.alloc(0)
    socket.on("data", (d) => (data = Buffer.concat([data, d])))
    socket.on("error", reject)
    socket.on("close", () => {
      const text = data.toString("utf8")
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1])
      const bodyText = text.slice(text.indexOf("\r\n\r\n") + 4)
      let body: unknown = bodyText
      try {
        body = JSON.parse(bodyText)
      } catch {
        // not JSON
      }
      resolve({ status, body })
    })
  })

const getWithHeaderBytes = (url: string, value: Buffer) =>
  rawRequest(url, Buffer.concat([
    Buffer.from(`GET /v1/entities HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${HEADER}: `),
    value,
    Buffer.from("\r\n\r\n")
  ]))

const WRITE = "/v1/gl/connect/session"

describe("SVC_ACTOR_HEADER (required, the default)", () => {
  let service: RunningService
  beforeAll(async () => {
    // Any case: header names are not case-sensitive.
    service = await start({ SVC_ACTOR_HEADER: "X-Forwarded-Email" })
  }, 60_000)
  afterAll(async () => {
    await service?.stop()
  })

  it("refuses a write that names no actor: 401 naming the header, in the error shape", async () => {
    const res = await http("POST", `${service.url}${WRITE}`, {})
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ statusCode: 401, error: "Unauthorized", message: expect.stringContaining(HEADER) })
    for (const method of ["PATCH", "DELETE"]) {
      const path = method === "DELETE" ? "/v1/gl" : "/v1/subledgers/expenses/0349944d-fb03-40cf-a73a-21b10c2a61e9"
      expect((await http(method, `${service.url}${path}`, method === "PATCH" ? { field: "amount", value: 1 } : undefined)).status).toBe(401)
    }
  })

  it("accepts the write that names one", async () => {
    const res = await http("POST", `${service.url}${WRITE}`, {}, { [HEADER]: "jane@example.com" })
    expect(res.status).toBeLessThan(300)
  })

  it("reads without the header run unnamed; health, docs and the console never ask", async () => {
    expect((await http("GET", `${service.url}/v1/entities`)).status).toBe(200)
    expect((await http("GET", `${service.url}/v1/health`)).status).toBe(200)
    expect((await fetch(`${service.url}/`)).status).toBe(200)
  })

  it("a malformed value answers 400 naming the header, on reads and writes alike", async () => {
    const cases: Array<[string, RegExp]> = [
      ["x".repeat(257), /at most 256/],
      ["agent:a11a0000-0000-4000-8000-0000000000a1", /agent:/],
      [Buffer.from("jane\u202e@example.com", "utf8").toString("latin1"), /invisible/]
    ]
    for (const [value, why] of cases) {
      for (const [method, path, body] of [["GET", "/v1/entities", undefined], ["POST", WRITE, {}]] as const) {
        const res = await http(method, `${service.url}${path}`, body, { [HEADER]: value })
        expect(res.status).toBe(400)
        expect(res.body).toEqual({ statusCode: 400, error: "Bad Request", message: expect.stringMatching(why) })
        expect(res.body.message).toContain(`Header ${HEADER}`)
      }
    }
    // Bytes that are not UTF-8, and a control character: only a raw client sends them.
    const latin1 = await getWithHeaderBytes(service.url, Buffer.from([0x6a, 0xe9, 0x20, 0x78]))
    expect(latin1.status).toBe(400)
    expect(latin1.body.message).toMatch(/not UTF-8/)
    // (Node's parser itself refuses the other control characters before the gateway sees them.)
    const control = await getWithHeaderBytes(service.url, Buffer.from("jane\tdoe"))
    expect(control.status).toBe(400)
    expect(control.body.message).toContain(HEADER)
    // UTF-8 names from the proxy are fine.
    const utf8 = await getWithHeaderBytes(service.url, Buffer.from("José Núñez", "utf8"))
    expect(utf8.status).toBe(200)
  })

  it("an actor's length counts characters (code points): 256 emoji are one actor, 257 are refused naming 257", async () => {
    // Before: 129 emoji (258 UTF-16 units) were refused as "258 characters long".
    const fits = await getWithHeaderBytes(service.url, Buffer.from("😀".repeat(256), "utf8"))
    expect(fits.status, JSON.stringify(fits.body)).toBe(200)
    const over = await getWithHeaderBytes(service.url, Buffer.from("😀".repeat(257), "utf8"))
    expect(over.status).toBe(400)
    expect(over.body.message).toContain("is 257 characters long; at most 256 are accepted")
  })
})

describe("SVC_ACTOR_REQUIRED=false", () => {
  let service: RunningService
  beforeAll(async () => {
    service = await start({ SVC_ACTOR_HEADER: HEADER, SVC_ACTOR_REQUIRED: "false" })
  }, 60_000)
  afterAll(async () => {
    await service?.stop()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  it("accepts writes that name no actor, and still refuses a malformed one", async () => {
    expect((await http("POST", `${service.url}${WRITE}`, {})).status).toBeLessThan(300)
    expect((await http("POST", `${service.url}${WRITE}`, {}, { [HEADER]: "agent:x" })).status).toBe(400)
  })
})
