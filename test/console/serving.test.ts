/**
 * How the gateway serves the console at /: the built page and its hashed assets, caching
 * (immutable hashed files, a revalidated index, ETags and 304), precompressed br/gzip chosen by
 * Accept-Encoding, a strict Content-Security-Policy, and /docs still the API reference.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pickEncoding } from "../../src/gateway/console.js"
import { type BuiltGateway, startBuiltGateway } from "../timeline/support.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const FIXTURE = join(ROOT, "fixtures", "demo.json")

let gw: BuiltGateway | undefined

beforeAll(async () => {
  gw = await startBuiltGateway({ SVC_SEED_FILE: FIXTURE })
}, 60_000)
afterAll(async () => {
  await gw?.cleanup()
})

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${gw!.url}${path}`, { headers })
const raw = async (res: Response) => Buffer.from(await res.arrayBuffer())

describe("the console at /", { timeout: 60_000 }, () => {
  it("serves the page with a strict CSP, no-cache and an ETag; the scripts it names are hashed and immutable", async () => {
    const res = await get("/", { "accept-encoding": "identity" })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/html/)
    expect(res.headers.get("cache-control")).toBe("no-cache")
    const csp = res.headers.get("content-security-policy") ?? ""
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("connect-src 'self'")
    expect(csp).not.toContain("unsafe-inline")
    expect(csp).not.toContain("unsafe-eval")
    expect(res.headers.get("x-content-type-options")).toBe("nosniff")
    const html = await res.text()
    expect(html).not.toMatch(/<script>|<style>|\sstyle=|\son[a-z]+=/i) // nothing inline the CSP would refuse
    // Relative to the page (served at the root, or under a proxy's path prefix).
    const script = /src="console(\/main-[A-Z0-9]+\.js)"/.exec(html)?.[1]?.replace(/^/, "/console")
    const style = /href="console(\/main-[A-Z0-9]+\.css)"/.exec(html)?.[1]?.replace(/^/, "/console")
    expect(script).toBeDefined()
    expect(style).toBeDefined()
    for (const path of [script!, style!]) {
      const asset = await get(path)
      expect(asset.status).toBe(200)
      expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
      expect(asset.headers.get("etag")).toMatch(/^"[^"]+"$/)
    }
    expect((await get(script!)).headers.get("content-type")).toMatch(/^text\/javascript/)
  })

  it("answers 304 to a matching If-None-Match, per encoding", async () => {
    const first = await get("/", { "accept-encoding": "br" })
    const etag = first.headers.get("etag")!
    expect(first.headers.get("content-encoding")).toBe("br")
    const again = await get("/", { "accept-encoding": "br", "if-none-match": etag })
    expect(again.status).toBe(304)
    expect(await again.text()).toBe("")
    // The identity body has another tag: the br one does not validate it.
    const plain = await get("/", { "accept-encoding": "identity", "if-none-match": etag })
    expect(plain.status).toBe(200)
    expect(plain.headers.get("etag")).not.toBe(etag)
  })

  it("sends the build's br and gzip files, the same bytes once decompressed, and varies on Accept-Encoding", async () => {
    const html = await get("/", { "accept-encoding": "identity" })
    const script = `/${/src="(console\/[^"]+)"/.exec(await html.text())![1]!}`
    const identity = await raw(await get(script, { "accept-encoding": "identity" }))
    // Node's fetch would decode transparently; read the wire bytes through node:http instead.
    const wire = async (encoding: string) => {
      const { request } = await import("node:http")
      return new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
        request(`${gw!.url}${script}`, { headers: { "accept-encoding": encoding } }, (res) => {
          const chunks: Array<Buffer> = []
          res.on("data", (c: Buffer) => chunks.push(c))
          res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }))
        }).on("error", reject).end()
      })
    }
    const br = await wire("gzip, deflate, br")
    expect(br.headers["content-encoding"]).toBe("br")
    expect(br.headers.vary).toBe("accept-encoding")
    expect(br.body.length).toBeLessThan(identity.length / 2)
    expect(brotliDecompressSync(br.body).equals(identity)).toBe(true)
    const gz = await wire("gzip")
    expect(gz.headers["content-encoding"]).toBe("gzip")
    expect(gunzipSync(gz.body).equals(identity)).toBe(true)
    // Same bytes as the build wrote.
    const name = script.slice("/console/".length)
    expect(readFileSync(join(ROOT, "dist", "console", name)).equals(identity)).toBe(true)
  })

  it("answers 404 in the error shape for a file the build did not make, traversal included", async () => {
    for (const path of ["/console/nope.js", "/console/build.json", "/console/..%2Fbuild.json", "/console/__proto__"]) {
      const res = await get(path)
      expect(res.status, path).toBe(404)
      expect(await res.json()).toMatchObject({ statusCode: 404, error: "Not Found" })
    }
  })

  it("leaves /docs to the API reference", async () => {
    const res = await get("/docs")
    expect(res.status).toBe(200)
    expect(await res.text()).not.toContain("/console/main-")
  })

  it("picks br, then gzip, honouring q=0", () => {
    expect(pickEncoding("gzip, deflate, br")).toBe("br")
    expect(pickEncoding("br;q=0, gzip")).toBe("gzip")
    expect(pickEncoding("identity")).toBe("identity")
    expect(pickEncoding(undefined)).toBe("identity")
    expect(pickEncoding("gzip;q=0")).toBe("identity")
  })
})
