/**
 * The hostile table: URLs and paths that must be refused with a 400 in the spec's error shape,
 * saying why. URLs that could reach a local server aim at a loopback "target" server that is NOT
 * on the allow-list; it must never see a request, nor even a connection.
 */
import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { BadRequest } from "../../src/api/errors.js"
import { IngestConfig } from "../../src/files/IngestConfig.js"
import { fileProviders } from "../../src/files/providers/index.js"
import { toResponse } from "../../src/http/errors/errorResponse.js"
import { FileFetcher, type FileFetcherService } from "../../src/files/FileFetcher.js"
import { startServer, startTarget, testLookup, type TestServer } from "./servers.js"
import { sourceHandler } from "./sources.js"

let source: TestServer // allow-listed
let target: TestServer // not allow-listed: must see nothing
let tmp: string
let root: string
let fetcher: FileFetcherService
let hasFifo = false

beforeAll(async () => {
  source = await startServer(sourceHandler)
  target = await startTarget()
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ingest-hostile-")))
  root = path.join(tmp, "root")
  fs.mkdirSync(path.join(root, "sub"), { recursive: true })
  fs.writeFileSync(path.join(root, "ok.txt"), "inside")
  fs.writeFileSync(path.join(tmp, "outside.txt"), "secret")
  fs.mkdirSync(path.join(tmp, "root-evil"))
  fs.writeFileSync(path.join(tmp, "root-evil", "secret.txt"), "secret")
  fs.symlinkSync(path.join(tmp, "outside.txt"), path.join(root, "link-out"))
  fs.symlinkSync("../outside.txt", path.join(root, "link-out-relative"))
  fs.symlinkSync(tmp, path.join(root, "link-dir"))
  fs.symlinkSync("/etc/passwd", path.join(root, "passwd"))
  try {
    execFileSync("mkfifo", [path.join(root, "fifo")])
    hasFifo = true
  } catch {
    hasFifo = false
  }
  fetcher = FileFetcher.fromProviders(
    fileProviders(
      IngestConfig.resolve({
        localRoot: root,
        maxBytes: 1024 * 1024,
        urlAllow: [`127.0.0.1:${source.port}`],
        connectTimeoutMs: 1_000,
        timeoutMs: 3_000
      }),
      { lookup: testLookup }
    )
  )
})

afterAll(async () => {
  await Promise.all([source.close(), target.close()])
  fs.rmSync(tmp, { recursive: true, force: true })
})

/** The body the gateway answers for this error (its one error mapping). */
const wireBody = (e: BadRequest): unknown => {
  const res = toResponse(e)
  expect(res.status).toBe(400)
  if (res.body._tag !== "Uint8Array") throw new Error(`unexpected body ${res.body._tag}`)
  return JSON.parse(new TextDecoder().decode(res.body.body))
}

interface Hostile {
  readonly name: string
  readonly ref: () => Record<string, unknown>
  /** What the 400 must say. */
  readonly why: RegExp
  readonly skip?: () => boolean
}

const T = () => target.port
const url = (u: () => string) => () => ({ provider: "url", url: u() })
const via = (loc: () => string, status = 302) => () => ({
  provider: "url",
  url: source.url(`/to?status=${status}&loc=${encodeURIComponent(loc())}`)
})
const local = (p: () => string) => () => ({ provider: "local", path: p() })

const REFUSED = (address: string, kind: string) =>
  new RegExp(`refused to connect to ${address.replace(/[.[\]()]/g, "\\$&")}(?: \\([\\w.-]+ resolved to it\\))?: ${/^(unspecified|IPv4)/.test(kind) ? "an" : "a"} ${kind.replace(/[()]/g, "\\$&")} address \\(.*\\); only public unicast addresses may be fetched unless host:port is in SVC_INGEST_URL_ALLOW$`)
const LOOPBACK = REFUSED("127.0.0.1", "loopback")
const AFTER_REDIRECT = (address: string, kind: string) =>
  new RegExp(`^fileRef\\.url \\(redirect 1, \\d{3} to .*\\): ${REFUSED(address, kind).source}`)

const table: ReadonlyArray<Hostile> = [
  // --- loopback in every spelling, aimed at the target server ---
  { name: "loopback literal 127.0.0.1", ref: url(() => `http://127.0.0.1:${T()}/secret`), why: LOOPBACK },
  { name: "localhost (resolves to loopback)", ref: url(() => `http://localhost:${T()}/`), why: /refused to connect to (127\.0\.0\.1|::1) \(localhost resolved to it\): a loopback address/ },
  { name: "localhost with a trailing dot", ref: url(() => `http://localhost.:${T()}/`), why: /refused to connect to|could not resolve host/ },
  { name: "decimal IP 2130706433", ref: url(() => `http://2130706433:${T()}/`), why: LOOPBACK },
  { name: "octal IP 0177.0.0.1", ref: url(() => `http://0177.0.0.1:${T()}/`), why: LOOPBACK },
  { name: "hex IP 0x7f000001", ref: url(() => `http://0x7f000001:${T()}/`), why: LOOPBACK },
  { name: "short IP 127.1", ref: url(() => `http://127.1:${T()}/`), why: LOOPBACK },
  { name: "IPv6 loopback [::1]", ref: url(() => `http://[::1]:${T()}/`), why: REFUSED("::1", "loopback") },
  { name: "IPv4-mapped IPv6 [::ffff:127.0.0.1]", ref: url(() => `http://[::ffff:127.0.0.1]:${T()}/`), why: REFUSED("::ffff:7f00:1", "IPv4-mapped IPv6") },
  { name: "unspecified 0.0.0.0", ref: url(() => `http://0.0.0.0:${T()}/`), why: REFUSED("0.0.0.0", "unspecified") },
  { name: "unspecified [::]", ref: url(() => `http://[::]:${T()}/`), why: REFUSED("::", "unspecified") },
  { name: "a name resolving to 127.0.0.1", ref: url(() => `http://loopback.test:${T()}/`), why: /refused to connect to 127\.0\.0\.1 \(loopback\.test resolved to it\): a loopback address/ },
  { name: "a name resolving to ::1", ref: url(() => `http://v6loop.test:${T()}/`), why: /refused to connect to ::1 \(v6loop\.test resolved to it\): a loopback address/ },
  { name: "a name resolving to a public AND a loopback address", ref: url(() => `http://mixed.test:${T()}/`), why: /refused to connect to 127\.0\.0\.1 \(mixed\.test resolved to it\): a loopback address/ },
  { name: "https to loopback", ref: url(() => `https://127.0.0.1:${T()}/`), why: LOOPBACK },
  { name: "gopher: to loopback", ref: url(() => `gopher://127.0.0.1:${T()}/_GET%20/`), why: /scheme "gopher" is refused; only http and https/ },
  { name: "credentials in the URL", ref: url(() => `http://user:pw@127.0.0.1:${T()}/`), why: /credentials in the URL are refused/ },
  // --- private, link-local, multicast ... (nothing listens there; refused before any connect) ---
  { name: "cloud metadata 169.254.169.254", ref: url(() => "http://169.254.169.254/latest/meta-data/"), why: REFUSED("169.254.169.254", "link-local (cloud metadata range)") },
  { name: "private 10.0.0.1", ref: url(() => "http://10.0.0.1/"), why: REFUSED("10.0.0.1", "private (RFC 1918)") },
  { name: "private 192.168.1.1", ref: url(() => "http://192.168.1.1/"), why: REFUSED("192.168.1.1", "private (RFC 1918)") },
  { name: "private 172.16.0.1", ref: url(() => "http://172.16.0.1/"), why: REFUSED("172.16.0.1", "private (RFC 1918)") },
  { name: "CGNAT 100.64.0.1", ref: url(() => "http://100.64.0.1/"), why: REFUSED("100.64.0.1", "carrier-grade NAT") },
  { name: "multicast 224.0.0.1", ref: url(() => "http://224.0.0.1/"), why: REFUSED("224.0.0.1", "multicast") },
  { name: "broadcast 255.255.255.255", ref: url(() => "http://255.255.255.255/"), why: REFUSED("255.255.255.255", "reserved or broadcast") },
  { name: "unique-local [fd00::1]", ref: url(() => "http://[fd00::1]/"), why: REFUSED("fd00::1", "unique-local") },
  { name: "link-local [fe80::1]", ref: url(() => "http://[fe80::1]/"), why: REFUSED("fe80::1", "link-local") },
  { name: "IPv6 multicast [ff02::1]", ref: url(() => "http://[ff02::1]/"), why: REFUSED("ff02::1", "multicast") },
  { name: "a name resolving to 10.1.2.3", ref: url(() => "http://private.test/"), why: REFUSED("10.1.2.3", "private (RFC 1918)") },
  // --- the allowed host:port does not open the host's other ports ---
  { name: "allowed host, other port", ref: url(() => `http://127.0.0.1:${T()}/`), why: LOOPBACK },
  // --- redirects from the allow-listed source ---
  { name: "redirect to 127.0.0.1 on a non-allowed port", ref: via(() => `http://127.0.0.1:${T()}/`), why: AFTER_REDIRECT("127.0.0.1", "loopback") },
  { name: "redirect (307) to localhost", ref: via(() => `http://localhost:${T()}/`, 307), why: /^fileRef\.url \(redirect 1, 307 to .*\): refused to connect to/ },
  { name: "redirect (301) to decimal loopback", ref: via(() => `http://2130706433:${T()}/`, 301), why: AFTER_REDIRECT("127.0.0.1", "loopback") },
  { name: "redirect to [::ffff:127.0.0.1]", ref: via(() => `http://[::ffff:127.0.0.1]:${T()}/`), why: AFTER_REDIRECT("::ffff:7f00:1", "IPv4-mapped IPv6") },
  { name: "redirect to the metadata service", ref: via(() => "http://169.254.169.254/latest/meta-data/"), why: AFTER_REDIRECT("169.254.169.254", "link-local (cloud metadata range)") },
  { name: "redirect to 10.0.0.1", ref: via(() => "http://10.0.0.1/"), why: AFTER_REDIRECT("10.0.0.1", "private (RFC 1918)") },
  { name: "redirect to a name resolving to loopback", ref: via(() => `http://loopback.test:${T()}/`), why: AFTER_REDIRECT("127.0.0.1", "loopback") },
  { name: "redirect to file:", ref: via(() => "file:///etc/passwd"), why: /redirect 1, 302 to file:\/\/\/etc\/passwd\): scheme "file" is refused/ },
  { name: "redirect to gopher:", ref: via(() => `gopher://127.0.0.1:${T()}/`), why: /scheme "gopher" is refused/ },
  // --- schemes ---
  { name: "file:", ref: url(() => "file:///etc/passwd"), why: /^fileRef\.url: scheme "file" is refused; only http and https are allowed$/ },
  { name: "ftp:", ref: url(() => "ftp://ftp.example.com/pub/file.csv"), why: /scheme "ftp" is refused/ },
  { name: "data:", ref: url(() => "data:text/plain;base64,aGk="), why: /scheme "data" is refused/ },
  { name: "javascript:", ref: url(() => "javascript:alert(1)"), why: /scheme "javascript" is refused/ },
  { name: "not a URL", ref: url(() => "not a url"), why: /not a valid absolute URL/ },
  { name: "scheme-relative //host", ref: url(() => `//127.0.0.1:${T()}/`), why: /not a valid absolute URL/ },
  // --- local paths ---
  { name: "relative path", ref: local(() => "ok.txt"), why: /fileRef\.path: must be an absolute path/ },
  { name: "dot-relative path", ref: local(() => "./ok.txt"), why: /must be an absolute path/ },
  { name: "../ escape from the root", ref: local(() => `${root}/../outside.txt`), why: /outside the local ingest root \(\.\.\/ escapes are refused\)/ },
  { name: "../ escape through a subdirectory", ref: local(() => `${root}/sub/../../outside.txt`), why: /outside the local ingest root/ },
  { name: "absolute path elsewhere (/etc/passwd)", ref: local(() => "/etc/passwd"), why: /outside the local ingest root/ },
  { name: "sibling directory sharing the root's prefix", ref: local(() => `${root}-evil/secret.txt`), why: /outside the local ingest root/ },
  { name: "symlink to a file outside the root", ref: local(() => `${root}/link-out`), why: /resolves outside the local ingest root \(symbolic link escapes are refused\)/ },
  { name: "relative symlink escaping the root", ref: local(() => `${root}/link-out-relative`), why: /symbolic link escapes are refused/ },
  { name: "symlinked directory leading outside", ref: local(() => `${root}/link-dir/outside.txt`), why: /symbolic link escapes are refused/ },
  { name: "symlink to /etc/passwd", ref: local(() => `${root}/passwd`), why: /symbolic link escapes are refused/ },
  { name: "a directory", ref: local(() => `${root}/sub`), why: /fileRef\.path: not a regular file \(a directory\)/ },
  { name: "the root itself", ref: local(() => root), why: /not a regular file \(a directory\)/ },
  { name: "a FIFO (would block a naive read)", ref: local(() => `${root}/fifo`), why: /not a regular file \(a FIFO\)/, skip: () => !hasFifo },
  { name: "a NUL byte in the path", ref: local(() => `${root}/ok.txt\0.pdf`), why: /must not contain NUL bytes/ },
  { name: "a missing file", ref: local(() => `${root}/missing.txt`), why: /fileRef\.path: no such file/ }
]

describe("hostile URLs and paths", () => {
  it("has at least 25 cases", () => {
    expect(table.length).toBeGreaterThanOrEqual(25)
  })

  for (const c of table) {
    it.live(`refuses: ${c.name}`, () =>
      Effect.gen(function*() {
        if (c.skip?.() === true) return
        const requestsBefore = target.requests.length
        const connectionsBefore = target.connections
        const e = yield* Effect.flip(fetcher.fetch(c.ref() as any))
        expect(e).toBeInstanceOf(BadRequest)
        const body = wireBody(e as BadRequest)
        expect(body).toEqual({ statusCode: 400, error: "Bad Request", message: expect.stringMatching(c.why) })
        // Give a stray connection a moment to show up before asserting none came.
        yield* Effect.sleep("5 millis")
        expect(target.requests.length).toBe(requestsBefore)
        expect(target.connections).toBe(connectionsBefore)
      }))
  }

  it("the target server saw no request and no connection at all", () => {
    expect(target.requests).toEqual([])
    expect(target.connections).toBe(0)
  })

  it.live("the target server is reachable when allow-listed (the harness can see a hit)", () =>
    Effect.gen(function*() {
      const allowing = FileFetcher.fromProviders(
        fileProviders(IngestConfig.resolve({ urlAllow: [`127.0.0.1:${target.port}`] }))
      )
      const got = yield* allowing.fetch({ provider: "url", url: `http://127.0.0.1:${target.port}/probe` })
      expect(Buffer.from(got.bytes).toString()).toBe("you should not see this")
      expect(target.requests.map((r) => r.url)).toEqual(["/probe"])
    }))
})

describe("local provider disabled", () => {
  it.live("answers 400 when SVC_LOCAL_INGEST_ROOT is not set", () =>
    Effect.gen(function*() {
      const off = FileFetcher.fromProviders(fileProviders(IngestConfig.resolve({})))
      const e = yield* Effect.flip(off.fetch({ provider: "local", path: path.join(root, "ok.txt") }))
      expect(e).toBeInstanceOf(BadRequest)
      expect(e.message).toBe("local provider is disabled: set SVC_LOCAL_INGEST_ROOT")
    }))
})
