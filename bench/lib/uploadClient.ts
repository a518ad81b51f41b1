/**
 * The client side the raw-upload experiments share (raw-upload.ts, upload-stalls.ts): a raw
 * upload sent in 1 MiB writes as a client streaming a file would (the writer is also
 * test/relay/durability.process.test.ts's), a JSON request, and a percentile of unsorted samples.
 */
import * as http from "node:http"

const MiB = 1024 * 1024

/** POSTs `bytes` as a raw upload in 1 MiB writes; resolves with the status and the time taken (ms). */
export const sendRawUpload = (
  port: number,
  path: string,
  bytes: Buffer,
  agent: http.Agent | false
): Promise<{ status: number; ms: number }> =>
  new Promise((resolve, reject) => {
    const t = performance.now()
    const req = http.request({
      host: "127.0.0.1",
      port,
      path,
      method: "POST",
      agent,
      headers: { "content-type": "application/pdf", "content-length": bytes.length, "x-svc-upload": "raw" }
    }, (res) => {
      res.resume()
      res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t }))
    })
    req.on("error", reject)
    writeInSlices(req, bytes)
  })

/**
 * Writes `bytes` as the request's body in 1 MiB writes, waiting for each drain, then ends it:
 * as a client streaming a file would (a whole body handed to fetch blocks the sender's loop).
 */
export const writeInSlices = (req: http.ClientRequest, bytes: Uint8Array): void => {
  let at = 0
  const more = () => {
    while (at < bytes.length) {
      const end = Math.min(bytes.length, at + MiB)
      const ok = req.write(bytes.subarray(at, end))
      at = end
      if (!ok) return void req.once("drain", more)
    }
    req.end()
  }
  more()
}

export const requestJson = (port: number, method: string, path: string, body?: unknown) =>
  new Promise<any>((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, method, headers: { "content-type": "application/json" } }, (res) => {
      let text = ""
      res.on("data", (c) => (text += c))
      res.on("end", () => resolve(JSON.parse(text)))
    })
    req.on("error", reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })

/** The p-th percentile of unsorted samples (the sample at floor(p% of n), the largest for 100). */
export const percentileOf = (xs: ReadonlyArray<number>, p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
