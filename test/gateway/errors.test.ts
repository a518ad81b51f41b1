import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as net from "node:net"
import { expectError, raw, serverPort, withGateway } from "../support/gateway.js"
import { ACME_US, EXPENSE_TASK } from "../support/world.js"

describe("error shape for what Effect does not shape by default", () => {
  it.effect("unknown route: 404 in the spec shape", () =>
    withGateway(() =>
      Effect.gen(function*() {
        expectError(yield* raw("GET", "/v1/nope"), 404, "Not Found", "GET /v1/nope")
        expectError(yield* raw("GET", "/v2/entities"), 404, "Not Found")
        // A known path with a method it does not take is a 405 (test/http/methodNotAllowed.test.ts).
        const wrongMethod = yield* raw("PUT", "/v1/entities")
        expectError(wrongMethod, 405, "Method Not Allowed", "PUT")
        expect(wrongMethod.headers["allow"]).toBe("GET, HEAD")
      })
    ))

  it.effect("malformed JSON: 400", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const res = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/action`, "{\"type\": ", { "content-type": "application/json" })
        expectError(res, 400, "Bad Request", "JSON")
      })
    ))

  it.effect("decode failure: 400 naming the field path", () =>
    withGateway(() =>
      Effect.gen(function*() {
        expectError(yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/action`, { type: "maybe" }), 400, "Bad Request", "type")
        expectError(
          yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/events`, { type: "x", source: "w", seq: 1, payload: { a: 1 }, groupKey: "g".repeat(129) }),
          400,
          "Bad Request",
          "groupKey"
        )
        expectError(yield* raw("POST", `/v1/entities/${ACME_US}/tasks`, {}), 400, "Bad Request", "workflowId")
        expectError(yield* raw("POST", `/v1/entities/${ACME_US}/tasks`, [1, 2]), 400, "Bad Request")
        expectError(yield* raw("POST", `/v1/entities/${ACME_US}/tasks`, "null"), 400, "Bad Request")
        // Not JSON at all: refused by media type (test/gateway/hostileInput.test.ts has the table).
        expectError(
          yield* raw("POST", `/v1/entities/${ACME_US}/tasks`, "workflowId=x", { "content-type": "text/plain" }),
          415,
          "Unsupported Media Type"
        )
      })
    ))

  it.effect("path params: UUIDs where the spec says UUID, composite task ids accepted", () =>
    withGateway(() =>
      Effect.gen(function*() {
        expectError(yield* raw("GET", "/v1/entities/acme-us/tasks"), 400, "Bad Request", "entityId")
        expectError(yield* raw("GET", "/v1/tasks/not-a-task/ui"), 400, "Bad Request", "taskId")
        expectError(yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}:step/events`), 400, "Bad Request", "taskId")
        expect((yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}:review_expenses:child/events`)).status).toBe(200)
      })
    ))

  it.effect("a body over the limit: 413 answered from Content-Length, not a dropped connection", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const big = { source: "s", data: "A".repeat(2048) }
        const res = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/files`, big)
        expectError(res, 413, "Payload Too Large", "1024-byte limit")
      }), { config: { maxBodyBytes: 1024 } }))

  it.effect("a chunked body over the limit answers 413 too", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const port = yield* serverPort
        const response = yield* Effect.promise(() => sendChunked(port, `/v1/tasks/${EXPENSE_TASK}/files`, 4096))
        expect(response).toMatch(/^HTTP\/1\.1 413/)
        expect(response).toContain("\"statusCode\":413")
      }), { config: { maxBodyBytes: 1024 } }))

  it("never answers a 500 with internals: a defect becomes a generic 500", async () => {
    const res = await Effect.runPromise(withGateway((workspace) =>
      Effect.suspend(() => {
        workspace.faults.all = () => {
          throw new Error("secret internal detail at /srv/app.ts:42")
        }
        return raw("GET", "/v1/entities")
      })))
    expectError(res, 500, "Internal Server Error", "Internal server error")
    expect(res.text).not.toContain("secret")
  })
})

/** Sends a JSON body of `size` bytes in chunks, without Content-Length; resolves with the raw response. */
const sendChunked = (port: number, path: string, size: number) =>
  new Promise<string>((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    let out = ""
    socket.on("data", (d) => (out += d.toString("utf8")))
    socket.on("close", () => resolve(out))
    socket.on("error", () => resolve(out))
    socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`)
    const body = JSON.stringify({ source: "s", data: "A".repeat(size) })
    for (let i = 0; i < body.length; i += 512) {
      const chunk = body.slice(i, i + 512)
      socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
    }
    socket.write("0\r\n\r\n")
    setTimeout(() => socket.end(), 2000)
  })

describe("oversized bodies at the Node server", () => {
  it.effect("a declared oversized body: 413 readable by the client, the body discarded, the connection reusable", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const port = yield* serverPort
        const answers = yield* Effect.promise(() => sendOversizedThenSmall(port, 256 * 1024))
        expect(answers[0]).toMatch(/^HTTP\/1\.1 413/)
        expect(answers[0]).toContain("\"statusCode\":413")
        // The same connection then serves the next request.
        expect(answers[1]).toMatch(/^HTTP\/1\.1 200/)
      }), { config: { maxBodyBytes: 1024 } }))

  it.effect("a chunked oversized body: the same (413 readable mid-body, the rest discarded, the connection reusable)", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const port = yield* serverPort
        // 1,000 times the limit: the client keeps sending after the 413 and still reads it.
        for (let i = 0; i < 3; i++) {
          const answers = yield* Effect.promise(() => sendOversizedThenSmall(port, 1024 * 1024, true))
          expect(answers[0]).toMatch(/^HTTP\/1\.1 413/)
          expect(answers[0]).toContain("\"statusCode\":413")
          expect(answers[1]).toMatch(/^HTTP\/1\.1 200/)
        }
      }), { config: { maxBodyBytes: 1024 } }))
})

/** One connection: a body of `size` bytes over the limit, then GET /v1/health; the two raw answers. */
const sendOversizedThenSmall = (port: number, size: number, chunked = false) =>
  new Promise<Array<string>>((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1")
    let out = ""
    socket.on("data", (d) => {
      out += d.toString("latin1")
      const parts = out.split(/(?=HTTP\/1\.1 )/)
      if (parts.length >= 2 && parts[1]!.includes("\"ok\"")) {
        socket.destroy()
        resolve(parts)
      }
    })
    socket.on("error", reject)
    const framing = chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${size}`
    socket.write(`POST /v1/tasks/${EXPENSE_TASK}/files HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`)
    const body = chunked
      ? Buffer.concat(Array.from({ length: size / 4096 }, () => Buffer.from(`1000\r\n${"A".repeat(4096)}\r\n`)).concat(Buffer.from("0\r\n\r\n")))
      : Buffer.alloc(size, 0x41)
    socket.write(body, () => socket.write("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"))
    setTimeout(() => {
      socket.destroy()
      resolve(out.split(/(?=HTTP\/1\.1 )/))
    }, 5000)
  })
