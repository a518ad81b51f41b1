/**
 * One webhook attempt on the wire: a POST through the shared outbound guard
 * (../../http/outbound/outboundGuard.ts: non-public addresses refused when the socket connects unless
 * host:port is in SVC_WEBHOOK_URL_ALLOW), redirects not followed, the whole attempt bounded by
 * the timeout (connect, send, and the receiver's status line). The receiver's body is read up to
 * 64 KiB or 1 s and dropped: nothing it says is kept but its status and, on 429/503, Retry-After.
 */
import * as Effect from "effect/Effect"
import * as http from "node:http"
import { bareHost, defaultPort, describeRequestError, errorMessage, httpsModule, makeOutboundAgents } from "../../http/outbound/outboundGuard.js"

export interface PostResult {
  /** The receiver's status; undefined when none came (refused, unreachable, timed out). */
  readonly status?: number | undefined
  /** Retry-After in ms (429 and 503 only), capped by the caller. */
  readonly retryAfterMs?: number | undefined
  readonly error?: string | undefined
}

const USER_AGENT = "tenant-gateway-webhooks/1"
const DRAIN_BYTES = 64 * 1024
/** How long the receiver's body may take once its status has arrived. */
const DRAIN_MS = 1000

/** Retry-After as seconds or an HTTP date; undefined when absent or unreadable. */
export const parseRetryAfter = (value: string | undefined, nowMs: number): number | undefined => {
  if (value === undefined) return undefined
  const text = value.trim()
  // Any run of digits is seconds (a huge one stays huge: the caller caps it, it is not misread as a date).
  if (/^\d+$/.test(text)) return Number(text) * 1000
  // An HTTP-date ("Sun, 06 Nov 1994 08:49:37 GMT"); Date.parse alone would read "-5" as a year.
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return undefined
  const at = Date.parse(text)
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : undefined
}

export const makeWebhookPoster = (urlAllow: ReadonlyArray<string>, timeoutMs: number) => {
  const agentFor = makeOutboundAgents()
  const allow = new Set(urlAllow)

  return (rawUrl: string, headers: Record<string, string>, body: string): Effect.Effect<PostResult> =>
    Effect.callback<PostResult>((resume) => {
      let done = false
      let req: http.ClientRequest | undefined
      const settle = (result: PostResult) => {
        if (done) return
        done = true
        clearTimeout(timer)
        resume(Effect.succeed(result))
      }
      const timer = setTimeout(() => {
        settle({ error: `no answer within ${timeoutMs} ms (SVC_WEBHOOK_TIMEOUT_MS)` })
        req?.destroy()
      }, timeoutMs)
      let target: URL
      try {
        target = new URL(rawUrl)
      } catch {
        settle({ error: "the subscription's url is not a valid URL" })
        return
      }
      const isHttps = target.protocol === "https:"
      const bytes = Buffer.from(body, "utf8")
      try {
        req = (isHttps ? httpsModule() : http).request({
          protocol: target.protocol,
          hostname: bareHost(target.hostname),
          port: defaultPort(target),
          path: `${target.pathname}${target.search}`,
          method: "POST",
          agent: agentFor(target, allow),
          headers: {
            "content-type": "application/json",
            "content-length": String(bytes.length),
            "user-agent": USER_AGENT,
            ...headers
          }
        })
      } catch (e) {
        settle({ error: `request could not be built: ${errorMessage(e)}` })
        return
      }
      const request = req
      request.on("error", (e) => settle({ error: describeRequestError(e, target, "SVC_WEBHOOK_URL_ALLOW", "delivered to") }))
      request.on("response", (res) => {
        const status = res.statusCode ?? 0
        const retryAfterMs = status === 429 || status === 503
          ? parseRetryAfter(res.headers["retry-after"] as string | undefined, Date.now())
          : undefined
        settle({
          status,
          retryAfterMs,
          ...(status >= 300 && status < 400 ? { error: `receiver answered ${status} (redirects are not followed)` } : {})
        })
        // Nothing more is waited for: a receiver that keeps sending, or never ends its body, is cut.
        const drainTimer = setTimeout(() => request.destroy(), DRAIN_MS)
        res.once("close", () => clearTimeout(drainTimer))
        let read = 0
        res.on("data", (chunk: Buffer) => {
          read += chunk.length
          if (read > DRAIN_BYTES) request.destroy()
        })
        res.on("error", () => request.destroy())
      })
      request.end(bytes)
      return Effect.sync(() => {
        done = true
        clearTimeout(timer)
        request.destroy()
      })
    })
}
