/**
 * On the built process: file names with bidirectional controls or other invisible
 * format characters (`inv\u202Efdp.exe` shows as `invexe.pdf`).
 *
 * - A name the caller gives (`fileName` of upload and ingest) is refused: 400 naming `fileName`.
 *   The caller chose it and can choose again; altering it silently would store a name the caller
 *   never sent.
 * - A name taken from the source (URL path, remote Content-Disposition, local basename) is kept
 *   with each such character replaced by `_`, as control characters already are: the caller did
 *   not type it, and the bytes are fine. The stored name is the served one.
 * - ZWJ and ZWNJ stay: emoji sequences and several scripts need them.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { type BuiltGateway, startGateway } from "./builtGateway.js"
import { startServer, type TestServer } from "./servers.js"

const RLO = "\u202e"
const SPOOF = `inv${RLO}fdp.exe`
/** Every bidi control and a sample of other invisible format characters. */
const INVISIBLE = [
  "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e", "\u200f", "\u061c",
  "\u200b", "\u2060", "\ufeff", "\u00ad", "\u2028", "\u{e0041}"
]

let gw: BuiltGateway
let source: TestServer
let root: string

beforeAll(async () => {
  source = await startServer((req, res) => {
    if (req.url === "/cd") {
      res.writeHead(200, { "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(SPOOF)}` })
    } else res.writeHead(200)
    res.end("MZ")
  })
  gw = await startGateway({ SVC_INGEST_URL_ALLOW: `127.0.0.1:${source.port}` })
  root = path.join(gw.dir, "drop")
  fs.mkdirSync(root)
  fs.writeFileSync(path.join(root, SPOOF), "MZ")
}, 60_000)

afterAll(async () => {
  await gw?.stop()
  await source?.close()
})

const data = Buffer.from("MZ").toString("base64")

describe("file names with bidirectional or invisible format characters", { timeout: 60_000 }, () => {
  it("are refused with a 400 naming fileName when the caller gives them (upload and ingest)", async () => {
    const taskId = await gw.newTask()
    for (const c of INVISIBLE) {
      const name = `inv${c}fdp.exe`
      const up = await http("POST", `${gw.url}/v1/tasks/${taskId}/files`, { source: "s", fileName: name, data })
      const ingest = await http("POST", `${gw.url}/v1/tasks/${taskId}/files/ingest`, {
        source: "s",
        fileName: name,
        fileRef: { provider: "inline_base64", data }
      })
      for (const res of [up, ingest]) {
        expect(res.status, JSON.stringify(name)).toBe(400)
        expect(res.body).toMatchObject({ statusCode: 400, error: "Bad Request" })
        expect(res.body.message).toContain("fileName")
        expect(res.body.message).toMatch(/bidirectional|invisible/)
      }
    }
    expect((await http("GET", `${gw.url}/v1/tasks/${taskId}/files`)).body).toEqual([])
  })

  it("keep ZWJ and ZWNJ (emoji sequences, Persian and Indic text)", async () => {
    const taskId = await gw.newTask()
    for (const name of ["family 👨\u200d👩\u200d👧.png", "می\u200cخواهم.pdf"]) {
      const up = await http("POST", `${gw.url}/v1/tasks/${taskId}/files`, { source: "s", fileName: name, data })
      expect(up.status, up.text).toBe(201)
      expect(up.body.filename).toBe(name)
    }
  })

  it("are neutralised (each character → _) in names taken from a URL, a Content-Disposition or a local path", async () => {
    const taskId = await gw.newTask()
    const fromUrl = await http("POST", `${gw.url}/v1/tasks/${taskId}/files/ingest`, {
      source: "s",
      fileRef: { provider: "url", url: source.url(`/${encodeURIComponent(SPOOF)}`) }
    })
    const fromDisposition = await http("POST", `${gw.url}/v1/tasks/${taskId}/files/ingest`, {
      source: "s",
      fileRef: { provider: "url", url: source.url("/cd") }
    })
    for (const res of [fromUrl, fromDisposition]) {
      expect(res.status, res.text).toBe(201)
      expect(res.body.filename).toBe("inv_fdp.exe")
      const down = await fetch(`${gw.url}${res.body.downloadUrl}`)
      expect(down.headers.get("content-disposition")).toBe(`attachment; filename="inv_fdp.exe"`)
      await down.arrayBuffer()
    }
  })

  it("are neutralised in a local file's basename", async () => {
    const local = await startGateway({ SVC_LOCAL_INGEST_ROOT: root })
    try {
      const taskId = await local.newTask()
      const res = await http("POST", `${local.url}/v1/tasks/${taskId}/files/ingest`, {
        source: "s",
        fileRef: { provider: "local", path: path.join(root, SPOOF) }
      })
      expect(res.status, res.text).toBe(201)
      expect(res.body.filename).toBe("inv_fdp.exe")
    } finally {
      await local.stop()
    }
  })
})
