/**
 * `{provider: "url", url, headers?}`: the gateway GETs the bytes from an http(s) URL the caller names.
 *
 * SSRF protection is the shared outbound guard (src/http/outbound/outboundGuard.ts): every hop goes
 * through a `request-filtering-agent` Agent that refuses non-public addresses at connect time;
 * `SVC_INGEST_URL_ALLOW` lists `host:port` pairs that may be reached although private (matched
 * per hop, so a redirect is checked again).
 *
 * Why node:http rather than the Effect HttpClient: the agent must be chosen per hop (port-aware
 * allow-list), redirects must be followed by hand and re-checked, the connect timeout needs the
 * socket's `connect` event, and the byte cap must abort the request the moment it is passed. The
 * platform's NodeHttpClient binds one Agent per layer and follows redirects with its own policy,
 * so the request is issued with node:http(s) inside `Effect.callback`, whose finalizer destroys the
 * request when the effect is interrupted (total timeout, caller gone).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as http from "node:http"
import type * as https from "node:https"
import type { LookupFunction } from "node:net"
import { BadRequest, PayloadTooLarge } from "../../api/errors.js"
import { type FetchedFile, provider } from "../FileFetcher.js"
import type { IngestConfigShape } from "../IngestConfig.js"
import { bareHost, defaultPort, describeRequestError, errorMessage, httpsModule, hostPortKey, makeOutboundAgents } from "../../http/outbound/outboundGuard.js"
import { headerText } from "../../services/actorValue.js"

export { describeRequestError }

/** Never forwarded from `fileRef.headers`: hop-by-hop headers, Host, and a body length (we send none). */
const DROPPED_HEADERS = new Set([
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length"
])
const isDropped = (name: string): boolean => DROPPED_HEADERS.has(name) || name.startsWith("proxy-")

/**
 * The only caller headers that follow a redirect to another origin. Any other header may carry a
 * credential for the origin the caller named (Authorization and Cookie, but also X-Api-Key,
 * Private-Token, X-Amz-Security-Token, ...), so an allow-list: what describes the wanted
 * representation (Accept*, Range) and who asks (User-Agent). Once dropped, a header stays dropped
 * for the rest of the chain, even if it comes back to the first origin.
 */
const CROSS_ORIGIN_SAFE = new Set(["accept", "accept-encoding", "accept-language", "range", "user-agent"])

const REDIRECTS = new Set([301, 302, 303, 307, 308])

const USER_AGENT = "tenant-gateway-ingest/1"

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const HeaderValue = Schema.String.annotate({ message: "header values must be strings" }).check(
  Schema.isPattern(/^[\t\x20-\x7e\x80-\xff]*$/, {
    message: "header values must not contain control characters (CR, LF, NUL) or non-Latin-1 text"
  })
)

export const UrlRef = Schema.Struct({
  provider: Schema.Literal("url"),
  url: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(8192)),
  headers: Schema.optionalKey(
    Schema.Record(Schema.String, HeaderValue).check(
      Schema.makeFilter((headers) => {
        const badName = Object.keys(headers).find((name) => !TOKEN.test(name))
        return badName === undefined || { path: [badName], issue: "header names must be HTTP tokens" }
      })
    )
  )
})

export interface UrlProviderOptions {
  /**
   * Name resolution for outgoing requests (default: dns.lookup). Every address it returns is still
   * checked by the filtering agent; tests use it to stand in for DNS.
   */
  readonly lookup?: LookupFunction | undefined
}

type Hop =
  | { readonly _tag: "Redirect"; readonly status: number; readonly location: string }
  | { readonly _tag: "Body"; readonly bytes: Uint8Array; readonly headers: http.IncomingHttpHeaders }

// ---- naming the file ------------------------------------------------------------------------

/** The last path segment of a would-be file name, without control characters; "" / "." / ".." → none. */
const cleanName = (name: string): string | undefined => {
  const last = name.split(/[/\\]/).pop() ?? ""
  const clean = last.replace(/[\u0000-\u001f\u007f]/g, "").trim()
  return clean === "" || clean === "." || clean === ".." ? undefined : clean
}

const decodeRfc8187 = (value: string): string | undefined => {
  const m = /^([A-Za-z0-9!#$%&+^_`{}~-]+)'[^']*'(.*)$/.exec(value.trim())
  if (m === null) return undefined
  const charset = m[1]!.toLowerCase()
  const encoded = m[2]!
  try {
    if (charset === "utf-8") return decodeURIComponent(encoded)
    if (charset === "iso-8859-1") {
      return encoded.replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    }
  } catch {
    return undefined
  }
  return undefined
}

/** RFC 6266: `filename*` (RFC 8187) preferred over `filename`. */
export const fileNameFromContentDisposition = (header: string | undefined): string | undefined => {
  if (header === undefined) return undefined
  const star = /(?:^|;)\s*filename\*\s*=\s*("?)([^;"]*)\1/i.exec(header)
  if (star !== null) {
    const decoded = decodeRfc8187(star[2]!)
    const name = decoded === undefined ? undefined : cleanName(decoded)
    if (name !== undefined) return name
  }
  const plain = /(?:^|;)\s*filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/i.exec(header)
  if (plain !== null) {
    const raw = plain[1] !== undefined ? plain[1].replace(/\\(.)/g, "$1") : (plain[2] ?? "").trim()
    // Many servers send a plain filename as raw UTF-8 (RFC 6266 leaves that to filename*): read
    // as UTF-8 when its bytes are, as browsers do (`rÃ©sumÃ©.pdf` otherwise), else as Latin-1.
    return cleanName(headerText(raw) ?? raw)
  }
  return undefined
}

/** The last path segment of the URL, percent-decoded. */
export const fileNameFromUrl = (u: URL): string | undefined => {
  const segment = u.pathname.split("/").pop() ?? ""
  let decoded = segment
  try {
    decoded = decodeURIComponent(segment)
  } catch {
    // keep it encoded
  }
  return cleanName(decoded)
}

const MIME = /^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/

export const contentTypeOf = (header: string | undefined): string | undefined => {
  const value = header?.trim()
  return value !== undefined && MIME.test(value) ? value : undefined
}

// ---- the provider ---------------------------------------------------------------------------

/**
 * Failure → status (all answer the spec's `{statusCode, message, error}` body):
 * - bad URL, scheme other than http/https, credentials in the URL: 400
 * - refused address (SSRF protection), also after a redirect: 400 "refused to connect to ..."
 * - DNS failure, connection refused/reset, TLS failure: 400 naming the reason
 * - connect timeout (SVC_INGEST_CONNECT_TIMEOUT_MS) and total timeout (SVC_INGEST_TIMEOUT_MS): 400.
 *   A source the caller named that does not answer in time is a bad reference, like one that
 *   answers 404; 400 keeps one rule for every failing source (no 502/504 from this provider).
 * - remote non-2xx: 400 "source answered <status>"
 * - a redirect to another origin forwards only CROSS_ORIGIN_SAFE caller headers (below)
 * - more than SVC_INGEST_MAX_REDIRECTS redirects: 400
 * - body over SVC_INGEST_MAX_BYTES (declared Content-Length or counted while streaming): 413
 */
export const urlProvider = (config: IngestConfigShape, options: UrlProviderOptions = {}) => {
  const agentFor = makeOutboundAgents()
  const allow = new Set(config.urlAllow)
  const lookup = options.lookup

  /** Parses and checks one hop's URL (the first, or a redirect's Location against the current one). */
  const checkUrl = (raw: string, base: URL | undefined, label: string): Effect.Effect<URL, BadRequest> => {
    let u: URL
    try {
      u = new URL(raw, base)
    } catch {
      return Effect.fail(new BadRequest({ message: `${label}: not a valid absolute URL` }))
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") {
      return Effect.fail(
        new BadRequest({
          message: `${label}: scheme "${u.protocol.replace(/:$/, "")}" is refused; only http and https are allowed`
        })
      )
    }
    if (u.username !== "" || u.password !== "") {
      return Effect.fail(
        new BadRequest({
          message: `${label}: credentials in the URL are refused; pass an Authorization header in fileRef.headers`
        })
      )
    }
    return Effect.succeed(u)
  }

  /** One GET; resolves with a redirect to follow or the whole (capped) body. */
  const requestOnce = (
    target: URL,
    headers: Readonly<Record<string, string>>,
    label: string
  ): Effect.Effect<Hop, BadRequest | PayloadTooLarge> =>
    Effect.callback<Hop, BadRequest | PayloadTooLarge>((resume) => {
      let done = false
      let connectTimer: ReturnType<typeof setTimeout> | undefined
      let req: http.ClientRequest | undefined
      const settle = (outcome: Effect.Effect<Hop, BadRequest | PayloadTooLarge>) => {
        if (done) return
        done = true
        if (connectTimer !== undefined) clearTimeout(connectTimer)
        resume(outcome)
      }
      const fail = (message: string) => settle(Effect.fail(new BadRequest({ message: `${label}: ${message}` })))
      const tooLarge = (message: string) => settle(Effect.fail(new PayloadTooLarge({ message: `${label}: ${message}` })))

      const isHttps = target.protocol === "https:"
      const agent = agentFor(target, allow)
      const requestOptions: https.RequestOptions = {
        protocol: target.protocol,
        hostname: bareHost(target.hostname),
        port: defaultPort(target),
        path: `${target.pathname}${target.search}`,
        method: "GET",
        headers,
        agent,
        ...(lookup !== undefined ? { lookup } : {})
      }
      try {
        req = isHttps ? httpsModule().request(requestOptions) : http.request(requestOptions)
      } catch (e) {
        fail(`request could not be built: ${errorMessage(e)}`)
        return
      }
      const request = req

      request.on("socket", (socket) => {
        if (done || !socket.connecting) return
        connectTimer = setTimeout(() => {
          fail(
            `could not connect to ${hostPortKey(target)} within ${config.connectTimeoutMs} ms ` +
              "(SVC_INGEST_CONNECT_TIMEOUT_MS)"
          )
          request.destroy()
        }, config.connectTimeoutMs)
        socket.once("connect", () => {
          if (connectTimer !== undefined) clearTimeout(connectTimer)
        })
      })
      request.on("error", (e) => fail(describeRequestError(e, target)))

      request.on("response", (res) => {
        if (done) {
          request.destroy()
          return
        }
        const status = res.statusCode ?? 0
        if (REDIRECTS.has(status)) {
          const location = res.headers.location
          if (location === undefined || location === "") fail(`source answered ${status} without a Location header`)
          else settle(Effect.succeed({ _tag: "Redirect", status, location }))
          request.destroy()
          return
        }
        if (status < 200 || status > 299) {
          fail(`source answered ${status}`)
          request.destroy()
          return
        }
        const declared = Number(res.headers["content-length"] ?? Number.NaN)
        if (Number.isFinite(declared) && declared > config.maxBytes) {
          tooLarge(`source declares ${declared} bytes, over the ${config.maxBytes}-byte ingest limit`)
          request.destroy()
          return
        }
        const chunks: Array<Buffer> = []
        let received = 0
        res.on("data", (chunk: Buffer) => {
          if (done) return
          received += chunk.length
          if (received > config.maxBytes) {
            // Nothing past the cap is kept; the connection is dropped at once.
            tooLarge(`body exceeds the ${config.maxBytes}-byte ingest limit`)
            request.destroy()
            return
          }
          chunks.push(chunk)
        })
        res.on("end", () => settle(Effect.succeed({ _tag: "Body", bytes: Buffer.concat(chunks, received), headers: res.headers })))
        res.on("error", (e) => fail(`source broke off the body after ${received} bytes (${errorMessage(e)})`))
        res.on("close", () => {
          if (!res.complete) fail(`source closed the connection after ${received} bytes, before the body was complete`)
        })
      })

      request.end()
      return Effect.sync(() => {
        done = true
        if (connectTimer !== undefined) clearTimeout(connectTimer)
        request.destroy()
      })
    })

  return provider({
    name: "url",
    fields: UrlRef,
    fetch: (ref) =>
      Effect.gen(function*() {
        const base: Record<string, string> = {}
        for (const [name, value] of Object.entries(ref.headers ?? {})) {
          const lower = name.toLowerCase()
          if (!isDropped(lower)) base[lower] = value
        }
        if (base["user-agent"] === undefined) base["user-agent"] = USER_AGENT

        let headers: Record<string, string> = base
        let current = yield* checkUrl(ref.url, undefined, "fileRef.url")
        let label = "fileRef.url"
        for (let redirects = 0;; redirects++) {
          const hop = yield* requestOnce(current, headers, label)
          if (hop._tag === "Body") {
            const fetched: FetchedFile = {
              bytes: hop.bytes,
              fileName: fileNameFromContentDisposition(hop.headers["content-disposition"]) ?? fileNameFromUrl(current),
              contentType: contentTypeOf(hop.headers["content-type"])
            }
            return fetched
          }
          if (redirects >= config.maxRedirects) {
            return yield* new BadRequest({
              message: `${label}: too many redirects (more than ${config.maxRedirects}, SVC_INGEST_MAX_REDIRECTS)`
            })
          }
          const shown = hop.location.length > 200 ? `${hop.location.slice(0, 200)}...` : hop.location
          const hopLabel = `fileRef.url (redirect ${redirects + 1}, ${hop.status} to ${shown})`
          const next = yield* checkUrl(hop.location, current, hopLabel)
          if (next.origin !== current.origin) {
            headers = Object.fromEntries(Object.entries(headers).filter(([k]) => CROSS_ORIGIN_SAFE.has(k)))
          }
          current = next
          label = hopLabel
        }
      }).pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(config.timeoutMs),
          orElse: () =>
            Effect.fail(new BadRequest({ message: `fileRef.url: timed out after ${config.timeoutMs} ms (SVC_INGEST_TIMEOUT_MS)` }))
        })
      )
  })
}
