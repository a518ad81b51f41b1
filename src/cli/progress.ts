/**
 * Upload progress on stderr. The typed client encodes the JSON body (base64 bytes inside) into
 * one buffer; this HttpClient transform resends that buffer as a stream of 64 KiB chunks and
 * counts the chunks as the HTTP client pulls them onto the socket.
 */
import * as HttpBody from "effect/http/HttpBody"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { formatBytes } from "./common.js"

export type ProgressMode = "auto" | "always" | "never"

/** Files at least this large get a bar in `auto` mode (when stderr is a terminal). */
export const LARGE_FILE_BYTES = 1024 * 1024

export const wantsProgress = (mode: ProgressMode, fileBytes: number): boolean =>
  mode === "always" || (mode === "auto" && process.stderr.isTTY === true && fileBytes >= LARGE_FILE_BYTES)

const CHUNK = 64 * 1024
const WIDTH = 30

/**
 * Draws `label [#####.....]  45%  4.5 MB / 10.0 MB` on one stderr line, redrawn in place. The
 * percentage is of the request body; the byte counts are scaled to the file's own size (the
 * body carries it base64-encoded, a third larger).
 */
export const makeBar = (label: string, fileBytes: number) => {
  let last = -1
  let done = false
  return {
    update: (sent: number, total: number) => {
      const pct = total === 0 ? 100 : Math.floor((sent / total) * 100)
      if (pct === last || done) return
      last = pct
      const filled = Math.round((pct / 100) * WIDTH)
      process.stderr.write(
        `\r${label} [${"#".repeat(filled)}${".".repeat(WIDTH - filled)}] ${String(pct).padStart(3)}%  ${formatBytes(Math.round((sent / Math.max(total, 1)) * fileBytes))} / ${formatBytes(fileBytes)}`
      )
      if (sent >= total) {
        done = true
        process.stderr.write("\n")
      }
    },
    end: () => {
      if (!done && last >= 0) process.stderr.write("\n")
      done = true
    }
  }
}

/** An HttpClient transform reporting how much of each request body has been handed to the socket. */
export const withUploadProgress = (onProgress: (sent: number, total: number) => void) =>
  HttpClient.mapRequest((request: HttpClientRequest.HttpClientRequest) => {
    if (request.body._tag !== "Uint8Array") return request
    const bytes = request.body.body
    const total = bytes.length
    const chunks = function*() {
      for (let i = 0; i < total; i += CHUNK) yield bytes.subarray(i, Math.min(i + CHUNK, total))
    }
    const stream = Stream.suspend(() => {
      let sent = 0
      return Stream.fromIterable(chunks()).pipe(
        Stream.tap((chunk) =>
          Effect.sync(() => {
            sent += chunk.length
            onProgress(sent, total)
          })
        )
      )
    })
    onProgress(0, total)
    return HttpClientRequest.setBody(request, HttpBody.stream(stream, request.body.contentType, total))
  })
