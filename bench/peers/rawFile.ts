/**
 * The raw upload's peer (bench/experiments/raw-upload.ts): bare node:http piping each POST body
 * to a file (then removed), answering 201 with its size; GET /v1/health answers 200.
 */
import { createWriteStream, unlink } from "node:fs"
import * as http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pipeline } from "node:stream/promises"

let n = 0
http.createServer((req, res) => {
  if (req.method !== "POST") {
    res.writeHead(200, { "content-type": "application/json" })
    return res.end('{"status":"ok"}')
  }
  const path = join(tmpdir(), `raw-peer-${process.pid}-${n++}`)
  const file = createWriteStream(path)
  let size = 0
  req.on("data", (c: Buffer) => (size += c.length))
  pipeline(req, file).then(
    () => {
      unlink(path, () => {})
      res.writeHead(201, { "content-type": "application/json" })
      res.end(JSON.stringify({ sizeBytes: size }))
    },
    () => {
      unlink(path, () => {})
      res.destroy()
    }
  )
}).listen(Number(process.env.PORT), "127.0.0.1")
