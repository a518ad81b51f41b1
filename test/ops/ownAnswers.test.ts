/**
 * The answers the Node server gives before the application sees a request (a declared body over
 * SVC_MAX_BODY_BYTES, too many headers, a malformed escape in the path) carry the request's id
 * and leave the same request line and metrics as any other request, on the built process: they
 * used to carry no `x-request-id` and leave no line, so a flood of refused uploads was invisible
 * in the log.
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
let port: number

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-own-answers-"))
  service = await startBuilt({
    SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`,
    SVC_LOG_FORMAT: "json",
    SVC_MAX_BODY_BYTES: "1024",
    SVC_MAX_HEADERS: "20"
  })
  port = Number(new URL(service.url).port)
}, 60_000)

afterAll(async () => {
  await service?.stop()
  rmSync(dir, { recursive: true, force: true })
})

/** One request written as `head` on a fresh connection; the answer's status and headers. */
const raw = (head: string) =>
  new Promise<{ status: number; headers: Record<string, string> }>((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(head))
    let text = ""
    socket.on("data", (d: Buffer) => {
      text += d.toString("latin1")
      const end = text.indexOf("\r\n\r\n")
      if (end === -1) return
      const [status, ...lines] = text.slice(0, end).split("\r\n")
      socket.destroy()
      resolve({
        status: Number(status!.split(" ")[1]),
        headers: Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]))
      })
    })
    socket.on("error", reject)
  })

interface Line {
  readonly msg: string
  readonly requestId?: string
  readonly method?: string
  readonly route?: string | null
  readonly path?: string
  readonly status?: number
  readonly level?: string
}
const lines = (from: number): Array<Line> =>
  service.output().slice(from).split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Line)
    .filter((l) => l.msg === "request")

const unmatched = async (status: number) => {
  const text = await (await fetch(`${service.url}/metrics`)).text()
  // Summed over the methods' series.
  const series = text.matchAll(new RegExp(`^http_requests_total\\{[^}]*route="unmatched"[^}]*status="${status}"[^}]*\\} (\\d+)`, "gm"))
  return [...series].reduce((sum, m) => sum + Number(m[1]), 0)
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe("answers the server gives before the application", () => {
  it("carry the request's id and leave one request line each, counted in the metrics", async () => {
    const from = service.output().length
    const before = { 413: await unmatched(413), 431: await unmatched(431), 400: await unmatched(400) }

    const tooLarge = await raw(
      "POST /v1/tasks/t/files?secret=1 HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n" +
        "x-request-id: edge-id-413\r\ncontent-length: 5000\r\n\r\n"
    )
    expect(tooLarge.status).toBe(413)
    expect(tooLarge.headers["x-request-id"]).toBe("edge-id-413")

    const manyHeaders = await raw(
      `GET /v1/health HTTP/1.1\r\nhost: x\r\n${Array.from({ length: 25 }, (_, i) => `x-h${i}: v\r\n`).join("")}\r\n`
    )
    expect(manyHeaders.status).toBe(431)
    expect(manyHeaders.headers["x-request-id"]).toMatch(UUID)

    // A caller's id that is not a valid one (a Cyrillic letter) is replaced, as everywhere.
    const malformed = await raw("GET /v1/%zz HTTP/1.1\r\nhost: x\r\nx-request-id: id-\xd0\x90\r\n\r\n")
    expect(malformed.status).toBe(400)
    expect(malformed.headers["x-request-id"]).toMatch(UUID)

    // A decision link's token is a credential: a link path refused for a malformed escape (its
    // `l` escaped too) is logged as /links/:token like any link.
    const link = await raw("GET /%6Cinks/SECRET-TOKEN%zz HTTP/1.1\r\nhost: x\r\n\r\n")
    expect(link.status).toBe(400)

    const seen = await waitFor("four request lines", () => {
      const found = lines(from).filter((l) => l.status === 413 || l.status === 431 || l.status === 400)
      return found.length >= 4 ? found : undefined
    })
    expect(service.output().slice(from)).not.toContain("SECRET-TOKEN")
    expect(seen).toEqual([
      expect.objectContaining({ requestId: "edge-id-413", method: "POST", route: null, path: "/v1/tasks/t/files", status: 413, level: "info" }),
      expect.objectContaining({ requestId: manyHeaders.headers["x-request-id"], method: "GET", route: null, status: 431 }),
      expect.objectContaining({ requestId: malformed.headers["x-request-id"], method: "GET", route: null, path: "/v1/%zz", status: 400 }),
      expect.objectContaining({ requestId: link.headers["x-request-id"], path: "/links/:token", status: 400 })
    ])
    expect(await unmatched(413)).toBe(before[413] + 1)
    expect(await unmatched(431)).toBe(before[431] + 1)
    expect(await unmatched(400)).toBe(before[400] + 2)
  })

  it("never log a decision link's token, whatever spelling of the link the request uses", async () => {
    const from = service.output().length
    const heads = [
      // absolute-form targets, refused by the server itself (a body over the limit, a malformed escape)
      "POST http://x/links/SECRET-ABS-413 HTTP/1.1\r\nhost: x\r\ncontent-length: 5000\r\n\r\n",
      "GET HTTP://x/a/../LINKS/SECRET-ABS-400%zz HTTP/1.1\r\nhost: x\r\n\r\n",
      // the Kelvin sign reads as `k` to the router; beside a malformed escape, refused with 400
      "GET /lin%E2%84%AAs/SECRET-KELVIN%zz HTTP/1.1\r\nhost: x\r\n\r\n",
      // a first character other than `/`: the router skips it and serves the link route
      "GET *links/SECRET-STAR HTTP/1.1\r\nhost: x\r\n\r\n",
      // spellings the router does not serve as a link (404s), whose token still opens the page
      "GET /./links/SECRET-DOT HTTP/1.1\r\nhost: x\r\n\r\n",
      "GET /x/../LINKS/SECRET-DOTDOT HTTP/1.1\r\nhost: x\r\n\r\n",
      "GET /%2e/links/SECRET-ESCDOT HTTP/1.1\r\nhost: x\r\n\r\n",
      "GET /links;x/SECRET-SEMI HTTP/1.1\r\nhost: x\r\n\r\n",
      "GET /links\\SECRET-BACKSLASH HTTP/1.1\r\nhost: x\r\n\r\n"
    ]
    const ids: Array<string> = []
    for (const head of heads) ids.push((await raw(head)).headers["x-request-id"]!)
    const seen = await waitFor("a line for each", () => {
      const found = lines(from).filter((l) => ids.includes(l.requestId!))
      return found.length === heads.length ? found : undefined
    })
    expect(service.output().slice(from)).not.toContain("SECRET-")
    expect(seen.map((l) => l.path)).toEqual(heads.map(() => "/links/:token"))
  })
})

describe("answers to requests Node's parser refuses", () => {
  it("carry a request id and leave one request line each (method and path when the request line was whole), counted", async () => {
    const from = service.output().length
    const before = await unmatched(400)
    // A header line without a colon; a request line with a control byte; bytes that are no request.
    const badHeader = await raw("GET /v1/entities?x=1 HTTP/1.1\r\nhost: x\r\nno colon here\r\n\r\n")
    const badLine = await raw("GET /v1/\x01evil HTTP/1.1\r\nhost: x\r\n\r\n")
    const junk = await raw("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n")
    const linkBad = await raw("POST /links/SECRET-PARSER HTTP/1.1\r\nhost: x\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n")
    const answers = [badHeader, badLine, junk, linkBad]
    for (const a of answers) {
      expect(a.status).toBe(400)
      expect(a.headers["x-request-id"]).toMatch(UUID)
    }
    const ids = answers.map((a) => a.headers["x-request-id"])
    const seen = await waitFor("a line for each", () => {
      const found = lines(from).filter((l) => l.requestId !== undefined && ids.includes(l.requestId))
      return found.length === answers.length ? found : undefined
    })
    expect(service.output().slice(from)).not.toContain("SECRET-PARSER")
    expect(service.output().slice(from)).not.toContain("evil")
    expect(seen).toEqual([
      expect.objectContaining({ requestId: ids[0], method: "GET", route: null, path: "/v1/entities", status: 400, level: "info" }),
      expect.objectContaining({ requestId: ids[1], method: "-", path: "-", status: 400 }),
      expect.objectContaining({ requestId: ids[2], method: "-", path: "-", status: 400 }),
      expect.objectContaining({ requestId: ids[3], method: "POST", path: "/links/:token", status: 400 })
    ])
    expect(await unmatched(400)).toBe(before + answers.length)
  })
})

describe("a malformed request after an earlier one on the same connection", () => {
  /** Writes each of `parts` on one connection, the next once an answer to the last has ended; every answer's status and id. */
  const onOneConnection = (parts: ReadonlyArray<string>) =>
    new Promise<Array<{ status: number; id: string | undefined }>>((resolve, reject) => {
      const socket = net.connect(port, "127.0.0.1", () => socket.write(parts[0]!))
      const answers: Array<{ status: number; id: string | undefined }> = []
      let text = ""
      socket.on("data", (d: Buffer) => {
        text += d.toString("latin1")
        for (;;) {
          const end = text.indexOf("\r\n\r\n")
          if (end === -1) return
          const head = text.slice(0, end)
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0)
          if (text.length < end + 4 + length) return
          answers.push({ status: Number(head.split(" ")[1]), id: /x-request-id: (\S+)/i.exec(head)?.[1] })
          text = text.slice(end + 4 + length)
          if (answers.length < parts.length) socket.write(parts[answers.length]!)
        }
      })
      socket.on("close", () => resolve(answers))
      socket.on("error", reject)
    })

  it("is answered, logged and counted, not met with a silent close; logged without the earlier request's method and path", async () => {
    const from = service.output().length
    const before = await unmatched(400)
    // A kept-alive connection: one answered request, then a header line without a colon.
    const sequential = await onOneConnection([
      "GET /v1/first HTTP/1.1\r\nhost: x\r\n\r\n",
      "GET /v1/second HTTP/1.1\r\nhost x\r\n\r\n"
    ])
    // Both in one packet: what the parser had read begins with the first (a link, whose path is not the second's).
    const pipelined = await onOneConnection([
      "GET /links/SECRET-FIRST HTTP/1.1\r\nhost: x\r\n\r\nGET /v1/second HTTP/1.1\r\nhost x\r\n\r\n"
    ])
    const refused = [sequential.at(-1), pipelined.at(-1)]
    expect(sequential.length).toBe(2)
    expect(pipelined.length).toBe(2)
    for (const a of refused) {
      expect(a?.status).toBe(400)
      expect(a?.id).toMatch(UUID)
    }
    const ids = refused.map((a) => a!.id)
    const seen = await waitFor("a line for each", () => {
      const found = lines(from).filter((l) => l.requestId !== undefined && ids.includes(l.requestId))
      return found.length === ids.length ? found : undefined
    })
    for (const line of seen) expect(line).toEqual(expect.objectContaining({ method: "-", path: "-", status: 400 }))
    expect(await unmatched(400)).toBe(before + ids.length)
  })

  it("is answered and logged once, whatever follows it on the connection", async () => {
    const from = service.output().length
    const before = await unmatched(400)
    // The parser repeats its error on each later packet; a bad chunk size in a body is the body's request's.
    const again = await onOneConnection(["GET /v1/x HTTP/1.1\r\nhost x\r\n\r\n", "more\r\n\r\n"])
    const badChunk = await onOneConnection([
      "POST /v1/entities HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n"
    ])
    // A body refused with 413 (over SVC_MAX_BODY_BYTES) and thrown away as it comes: a bad chunk
    // after the answer is that answered request's, not one more to answer.
    const refusedThenBad = await onOneConnection([
      `POST /v1/entities HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n800\r\n${"a".repeat(2048)}\r\n`,
      "zz\r\n\r\n"
    ])
    expect(again.map((a) => a.status)).toEqual([400])
    expect(badChunk.map((a) => a.status)).toEqual([400])
    expect(refusedThenBad.map((a) => a.status)).toEqual([413])
    const ids = [again[0]!.id, badChunk[0]!.id]
    await waitFor("a line for each, the 413's too", () =>
      lines(from).filter((l) => (l.requestId !== undefined && ids.includes(l.requestId)) || l.status === 413).length === 3 ? true : undefined)
    const refusedLines = lines(from).filter((l) => l.status === 400)
    expect(refusedLines).toEqual([
      expect.objectContaining({ requestId: ids[0], method: "GET", path: "/v1/x" }),
      expect.objectContaining({ requestId: ids[1], method: "POST", path: "/v1/entities" })
    ])
    // The bad chunk's request was the application's already: its one line is this answer, no 499 beside it.
    expect(lines(from).filter((l) => l.path === "/v1/entities").map((l) => l.status)).toEqual([400, 413])
    expect(await unmatched(400)).toBe(before + 2)
  })
})

describe("a request waiting for room for its body", () => {
  let waitDir: string
  let waiting: RunningService
  beforeAll(async () => {
    waitDir = mkdtempSync(join(tmpdir(), "gateway-own-answers-wait-"))
    waiting = await startBuilt({
      SVC_DATABASE_URL: `file:${join(waitDir, "workspace.db")}`,
      SVC_LOG_FORMAT: "json",
      SVC_MAX_BODY_BYTES_IN_FLIGHT: "100000",
      SVC_BODY_BUDGET_WAIT_MS: "60000"
    })
  }, 60_000)
  afterAll(async () => {
    await waiting?.stop()
    rmSync(waitDir, { recursive: true, force: true })
  })

  it("is logged (499) when its client gives up, as any abandoned request is", async () => {
    const wport = Number(new URL(waiting.url).port)
    const open = (head: string) =>
      new Promise<net.Socket>((resolve, reject) => {
        const socket = net.connect(wport, "127.0.0.1", () => {
          socket.write(head)
          resolve(socket)
        })
        socket.on("error", reject)
      })
    const from = waiting.output().length
    // The first body takes the budget (its bytes never come; the application reading it asks for
    // them with 100 Continue: admitted); the second waits behind it.
    const holder = await open(
      "POST /v1/tasks/00000000-0000-4000-8000-000000000001/action HTTP/1.1\r\nhost: x\r\n" +
        "content-type: application/json\r\nexpect: 100-continue\r\ncontent-length: 90000\r\n\r\n"
    )
    let heard = ""
    holder.on("data", (d: Buffer) => (heard += d.toString("latin1")))
    await waitFor("the holder admitted", () => (heard.includes("100 Continue") ? true : undefined))
    const waiter = await open(
      "POST /v1/waiter HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-request-id: edge-waiter\r\ncontent-length: 90000\r\n\r\n"
    )
    waiter.destroy()
    const seen = await waitFor("the waiter's line", () => {
      const found = waiting.output().slice(from).split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Line)
        .filter((l) => l.msg === "request" && l.requestId === "edge-waiter")
      return found.length > 0 ? found : undefined
    })
    expect(seen).toEqual([expect.objectContaining({ path: "/v1/waiter", status: 499, route: null })])
    holder.destroy()
  })
})
