/**
 * Peer: raw node:http, the practical limit. Routing by hand, JSON.parse on the collected body.
 */
import { createReadStream } from "node:fs"
import * as http from "node:http"
import { pipeline } from "node:stream"
import { badRequest, BadInput, document, health, ingest, listTasks, maxBodyBytes, notFound, port, upload } from "./common.js"

const send = (res: http.ServerResponse, status: number, value: unknown) => {
  const body = JSON.stringify(value)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}

const readJson = (req: http.IncomingMessage): Promise<any> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBodyBytes) {
        req.destroy()
        reject(new BadInput("body too large"))
      } else chunks.push(chunk)
    })
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")))
      } catch (e) {
        reject(new BadInput(String(e)))
      }
    })
    req.on("error", reject)
  })

const TASKS = /^\/v1\/entities\/([^/]+)\/tasks$/
const FILES = /^\/v1\/tasks\/([^/]+)\/files$/
const DOWNLOAD = /^\/v1\/tasks\/([^/]+)\/files\/([^/]+)\/download$/
const INGEST = /^\/v1\/tasks\/([^/]+)\/data\/ingest$/

const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
  const path = req.url!.split("?", 1)[0]!
  let m: RegExpExecArray | null
  if (req.method === "GET" && path === "/v1/health") return send(res, 200, health)
  if (req.method === "GET" && (m = TASKS.exec(path)) !== null) {
    const list = await listTasks(decodeURIComponent(m[1]!))
    return list === undefined ? send(res, 404, notFound("Entity not found")) : send(res, 200, list)
  }
  if (req.method === "POST" && (m = FILES.exec(path)) !== null) {
    const result = await upload(decodeURIComponent(m[1]!), await readJson(req))
    return result === undefined ? send(res, 404, notFound("Task not found")) : send(res, 201, result)
  }
  if (req.method === "GET" && (m = DOWNLOAD.exec(path)) !== null) {
    if (document === undefined || m[2] !== document.id) return send(res, 404, notFound("Document not found"))
    res.writeHead(200, document.headers)
    return pipeline(createReadStream(document.file), res, () => {})
  }
  if (req.method === "POST" && (m = INGEST.exec(path)) !== null) {
    const result = await ingest(decodeURIComponent(m[1]!), await readJson(req))
    return result === undefined ? send(res, 404, notFound("Task not found")) : send(res, 201, result)
  }
  return send(res, 404, notFound(`Cannot ${req.method} ${path}`))
}

http.createServer((req, res) => {
  handle(req, res).catch((e) => {
    if (!res.headersSent) send(res, e instanceof BadInput ? 400 : 500, badRequest(String(e)))
  })
}).listen(port, "127.0.0.1")
