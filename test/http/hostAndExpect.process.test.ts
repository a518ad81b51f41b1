/**
 * Host and Expect, judged by the server before the application, on the built process: a
 * request without Host (HTTP/1.1) or with two, and an Expect other than 100-continue, answer in
 * the spec's error shape with a request id and a request line. Node answered the first with an
 * empty chunked 400 and the last with an empty 417, and took two Host headers (200).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mkdtempSync, rmSync } from "node:fs"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type RunningService, startBuilt } from "../support/process.js"
import { waitFor } from "../support/waitFor.js"

let dir: string
let service: RunningService

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-host-expect-"))
  service = await startBuilt({ SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`, SVC_LOG_FORMAT: "json" })
}, 60_000)

afterAll(async () => {
  await service?.stop()
  rmSync(dir, { recursive: true, force: true })
})

interface Answer {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
  /** Everything received, interim answers included. */
  readonly text: string
}

/**
 * `head` written on a fresh connection to `url`'s port (then `body`, once `100 Continue` comes,
 * when given); the final answer, once its body is whole.
 */
const raw = (url: string, head: string, body?: string) =>
  new Promise<Answer>((resolve, reject) => {
    const socket = net.connect(Number(new URL(url).port), "127.0.0.1", () => socket.write(head))
    let text = ""
    const timer = setTimeout(() => socket.destroy(new Error(`no whole answer in 5 s: ${JSON.stringify(text)}`)), 5_000)
    socket.on("data", (d: Buffer) => {
      text += d.toString("latin1")
      let rest = text
      if (rest.startsWith("HTTP/1.1 100 Continue\r\n\r\n")) {
        if (body !== undefined && text.length === rest.length) socket.write(body)
        rest = rest.slice("HTTP/1.1 100 Continue\r\n\r\n".length)
      }
      const end = rest.indexOf("\r\n\r\n")
      if (end === -1) return
      const [status, ...lines] = rest.slice(0, end).split("\r\n")
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()])
      )
      // Node's own empty answers were chunked: their end is the last chunk.
      const chunked = headers["transfer-encoding"] === "chunked"
      if (chunked && !rest.endsWith("0\r\n\r\n")) return
      const length = chunked ? rest.length - end - 4 : Number(headers["content-length"] ?? 0)
      if (rest.length < end + 4 + length) return
      clearTimeout(timer)
      socket.destroy()
      resolve({ status: Number(status!.split(" ")[1]), headers, body: rest.slice(end + 4, end + 4 + length), text })
    })
    socket.on("error", (e) => {
      clearTimeout(timer)
      reject(e)
    })
  })

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const requestLines = (from: number) =>
  service.output().slice(from).split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
    .filter((l: { msg?: string }) => l.msg === "request") as Array<{ requestId: string; status: number; path: string }>

/** `a` is the server's own answer in the spec's shape, with its id and the request's log line. */
const expectOwnAnswer = async (a: Answer, from: number, answer: { statusCode: number; error: string; message: string }, path: string) => {
  expect(a.status).toBe(answer.statusCode)
  expect(a.headers["content-type"]).toBe("application/json")
  expect(JSON.parse(a.body)).toEqual(answer)
  expect(a.headers["x-request-id"]).toMatch(UUID)
  const line = await waitFor("its request line", () => requestLines(from).find((l) => l.requestId === a.headers["x-request-id"]))
  expect(line).toMatchObject({ status: answer.statusCode, path })
}

describe("Host", () => {
  it("missing from an HTTP/1.1 request: 400 in the spec's shape, with its id and request line", async () => {
    const from = service.output().length
    const a = await raw(service.url, "GET /v1/entities HTTP/1.1\r\n\r\n")
    await expectOwnAnswer(a, from, {
      statusCode: 400,
      error: "Bad Request",
      message: "The request has no Host header: an HTTP/1.1 request must send one (RFC 9112, section 3.2)"
    }, "/v1/entities")
  })

  it("missing from an HTTP/1.0 request: served, as HTTP/1.0 allows", async () => {
    const a = await raw(service.url, "GET /v1/health HTTP/1.0\r\n\r\n")
    expect(a.status).toBe(200)
  })

  it("sent twice: 400 in the spec's shape, on the gateway's port and the admin listener alike", async () => {
    for (const url of [service.url, service.adminUrl]) {
      const path = url === service.url ? "/v1/health" : "/workspace/openapi.json"
      const a = await raw(url, `GET ${path} HTTP/1.1\r\nhost: a.example\r\nHost: b.example\r\n\r\n`)
      expect(a.status, url).toBe(400)
      expect(a.headers["content-type"]).toBe("application/json")
      expect(JSON.parse(a.body)).toEqual({
        statusCode: 400,
        error: "Bad Request",
        message: "The request has 2 Host headers: exactly one is accepted (RFC 9112, section 3.2)"
      })
      // Once: served.
      expect((await raw(url, `GET ${path} HTTP/1.1\r\nhost: a.example\r\n\r\n`)).status, url).toBe(200)
    }
  })
})

describe("CONNECT", () => {
  it("a tunnel request: 405 in the spec's shape, then closed (before: the socket was closed without a word)", async () => {
    for (const url of [service.url, service.adminUrl]) {
      const a = await raw(url, `CONNECT 127.0.0.1:${new URL(url).port} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`)
      expect(a.status).toBe(405)
      expect(JSON.parse(a.body)).toEqual({ statusCode: 405, error: "Method Not Allowed", message: "CONNECT is not served: this is not a proxy" })
    }
  })
})

describe("Expect", () => {
  it("other than 100-continue: 417 in the spec's shape, with its id and request line", async () => {
    const from = service.output().length
    const a = await raw(service.url, "GET /v1/health HTTP/1.1\r\nhost: x\r\nexpect: foo\r\n\r\n")
    await expectOwnAnswer(a, from, {
      statusCode: 417,
      error: "Expectation Failed",
      message: "Expect \"foo\" is not supported: the only expectation accepted is \"100-continue\""
    }, "/v1/health")
  })

  it("holding 100-continue among others, or twice, or as a prefix: 417, no 100 Continue", async () => {
    // Node reads any Expect holding the word 100-continue as one (found by an attack pass).
    for (const expectation of ["expect: 100-continue, foo\r\n", "expect: foo\r\nexpect: 100-continue\r\n", "expect: 100-continue-x\r\n"]) {
      const a = await raw(service.url, `GET /v1/health HTTP/1.1\r\nhost: x\r\n${expectation}\r\n`)
      expect([a.status, a.text.startsWith("HTTP/1.1 100")], expectation).toEqual([417, false])
      expect(JSON.parse(a.body)).toMatchObject({ statusCode: 417, error: "Expectation Failed" })
    }
    // In another case, with spaces: still the one expectation.
    const ok = await raw(service.url, "GET /v1/health HTTP/1.1\r\nhost: x\r\nexpect:  100-Continue \r\n\r\n")
    expect(ok.status).toBe(200)
  })

  it("100-continue: the client is told to go on, and its request is served", async () => {
    const body = JSON.stringify({ source: "edge-test", seq: 1, type: "note", payload: {} })
    const a = await raw(
      service.url,
      `POST /v1/tasks/00000000-0000-4000-8000-000000000000/events HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n` +
        `content-length: ${body.length}\r\nexpect: 100-continue\r\n\r\n`,
      body
    )
    expect(a.text.startsWith("HTTP/1.1 100 Continue\r\n\r\n")).toBe(true)
    // The body was read and judged: the task does not exist.
    expect(JSON.parse(a.body)).toMatchObject({ statusCode: 404 })
  })
})

describe("a request target with raw bytes a URL cannot carry", () => {
  it("a UTF-8 é or a control character in the path or query: 400 saying to percent-encode it; encoded, it is read", async () => {
    const expected = {
      statusCode: 400,
      error: "Bad Request",
      message: "Malformed HTTP request: the path or query holds a character a URL cannot carry raw (a control character " +
        "or a byte outside ASCII, such as UTF-8 text): percent-encode it (RFC 3986: each UTF-8 byte as %XX)"
    }
    for (const url of [service.url, service.adminUrl]) {
      for (const target of ["/v1/tasks/é", "/v1/entities?x=é", "/v1/entities\x01", "/workspace/tasks/ü"]) {
        const a = await raw(url, `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`)
        expect(a.status, `${url} ${JSON.stringify(target)}`).toBe(400)
        expect(JSON.parse(a.body), target).toEqual(expected)
      }
    }
    // Percent-encoded, the same text reaches the application: a task id that is no id is its 400.
    const encoded = await raw(service.url, "GET /v1/tasks/%C3%A9/ui HTTP/1.1\r\nHost: x\r\n\r\n")
    expect(encoded.status).toBe(400)
    expect(JSON.parse(encoded.body).message).toMatch(/taskId/)
  })
})
