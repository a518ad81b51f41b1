/** A Server-Sent Events reader for tests: fetch, frames parsed as they arrive, closed by abort. */

export interface SseFrame {
  readonly id?: string
  readonly event?: string
  readonly data?: string
  readonly retry?: string
  /** The text of a comment line (`: keep-alive` gives "keep-alive"). */
  readonly comment?: string
}

export interface SseConnection {
  readonly status: number
  readonly headers: Headers
  /** The whole body of a non-stream answer (an error). */
  readonly text: () => Promise<string>
  /** The next frame, comments included; rejects after `timeoutMs`. */
  readonly next: (timeoutMs?: number) => Promise<SseFrame>
  /** The next frame with data, skipping comments. */
  readonly nextEvent: (timeoutMs?: number) => Promise<SseFrame>
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>
  /** Every byte received so far, as text. */
  readonly received: () => string
  readonly close: () => void
}

const parseFrame = (block: string): SseFrame => {
  const frame: { id?: string; event?: string; data?: string; comment?: string; retry?: string } = {}
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) frame.comment = line.slice(1).trim()
    else {
      const colon = line.indexOf(":")
      const field = colon === -1 ? line : line.slice(0, colon)
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "")
      if (field === "id") frame.id = value
      else if (field === "event") frame.event = value
      else if (field === "retry") frame.retry = value
      else if (field === "data") frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`
    }
  }
  return frame
}

export const openSse = async (url: string, headers: Record<string, string> = {}): Promise<SseConnection> => {
  const controller = new AbortController()
  const res = await fetch(url, { headers: { accept: "text/event-stream", ...headers }, signal: controller.signal })
  const frames: Array<SseFrame> = []
  const waiters: Array<() => void> = []
  let all = ""
  let buffer = ""
  let endedResolve!: () => void
  const ended = new Promise<void>((resolve) => (endedResolve = resolve))
  const isStream = (res.headers.get("content-type") ?? "").startsWith("text/event-stream")
  if (isStream) {
    void (async () => {
      const decoder = new TextDecoder()
      const reader = res.body!.getReader()
      try {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          const text = decoder.decode(value, { stream: true })
          all += text
          buffer += text
          let end: number
          while ((end = buffer.indexOf("\n\n")) !== -1) {
            frames.push(parseFrame(buffer.slice(0, end)))
            buffer = buffer.slice(end + 2)
          }
          waiters.splice(0).forEach((w) => w())
        }
      } catch {
        // aborted
      }
      endedResolve()
      waiters.splice(0).forEach((w) => w())
    })()
  } else endedResolve()

  let ended_ = false
  void ended.then(() => (ended_ = true))
  const next = (timeoutMs = 3000) =>
    new Promise<SseFrame>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no SSE frame within ${timeoutMs} ms; got so far: ${JSON.stringify(all)}`)), timeoutMs)
      const take = () => {
        const frame = frames.shift()
        if (frame !== undefined) {
          clearTimeout(timer)
          resolve(frame)
        } else if (ended_) {
          clearTimeout(timer)
          reject(new Error("the stream ended"))
        } else waiters.push(take)
      }
      take()
    })
  const nextEvent = async (timeoutMs = 3000): Promise<SseFrame> => {
    const until = Date.now() + timeoutMs
    for (;;) {
      const frame = await next(Math.max(1, until - Date.now()))
      if (frame.data !== undefined) return frame
    }
  }
  return {
    status: res.status,
    headers: res.headers,
    text: () => res.text(),
    next,
    nextEvent,
    ended,
    received: () => all,
    close: () => controller.abort()
  }
}

/** The in-process test server's base URL. */
export { baseUrl } from "../fixtures/http.js"
