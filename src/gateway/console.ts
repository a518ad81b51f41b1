/**
 * Serves the task console (src/console, built by scripts/build-console.mjs into dist/console):
 * `/` is its index.html, `/console/<file>` its content-hashed script and stylesheet. Loaded on
 * the first request to either (lazyRoutes in Gateway.ts), so it costs nothing at start.
 *
 * - Caching: hashed files are immutable for a year; index.html is `no-cache` (revalidated
 *   every time) so a new build is picked up at once. Every file has a strong ETag from the
 *   build, per encoding, and If-None-Match answers 304.
 * - Compression: the build wrote a `.br` and a `.gz` beside each file; the request's
 *   Accept-Encoding picks one (br, then gzip), nothing is compressed per request.
 * - A strict Content-Security-Policy: scripts, styles and requests to this origin only, no
 *   inline script or style, no framing, no forms elsewhere. The page talks only to this
 *   gateway's /v1, which is bound to one tenant, so nothing here can show another tenant's data.
 * - Only files the build lists are served (an own-property lookup of the manifest): no path
 *   from the request ever reaches the file system.
 */
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Effect from "effect/Effect"
import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { errorResponse } from "../http/errors/errorBody.js"
import { RETRY_AFTER_SECONDS } from "../http/errors/errorResponse.js"

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'"
].join("; ")

const IMMUTABLE = "public, max-age=31536000, immutable"

interface ManifestFile {
  readonly type: string
  readonly etag: string
}
interface Manifest {
  readonly files: Readonly<Record<string, ManifestFile>>
}

/** dist/console beside the bundled entry (dist/*.js), or from the sources (src/http) two levels up. */
const consoleDir = (): string | undefined => {
  const here = dirname(fileURLToPath(import.meta.url))
  return [join(here, "console"), join(here, "..", "..", "dist", "console")].find((d) => existsSync(join(d, "build.json")))
}

type Encoding = "br" | "gzip" | "identity"

/** br, then gzip, when Accept-Encoding takes them (q > 0); identity otherwise. */
export const pickEncoding = (accept: string | undefined): Encoding => {
  const taken = new Set<string>()
  for (const part of (accept ?? "").split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";")
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="))
    if (name !== undefined && name !== "" && (q === undefined || Number(q.slice(2)) > 0)) taken.add(name)
  }
  return taken.has("br") ? "br" : taken.has("gzip") || taken.has("*") ? "gzip" : "identity"
}

const etagFor = (etag: string, encoding: Encoding) => (encoding === "identity" ? etag : `${etag.slice(0, -1)}-${encoding}"`)

const notModified = (ifNoneMatch: string | undefined, etag: string) =>
  ifNoneMatch !== undefined && (ifNoneMatch.trim() === "*" || ifNoneMatch.split(",").some((t) => t.trim().replace(/^W\//, "") === etag))

const noStoreError = (statusCode: number, error: string, message: string, headers: Record<string, string> = {}) =>
  errorResponse(statusCode, error, message, { "cache-control": "no-store", ...headers })

/** Every 503 carries the README's Retry-After. */
const RETRY_AFTER = { "retry-after": RETRY_AFTER_SECONDS }

export const ConsoleRoutes = HttpRouter.use((router) =>
  Effect.gen(function*() {
    // Found on first use; looked for again while missing (a build may land after the start).
    let dir: string | undefined
    let manifest: Manifest | undefined
    const load = Effect.suspend(() => {
      if (manifest !== undefined) return Effect.succeed(manifest)
      dir = consoleDir()
      if (dir === undefined) return Effect.succeed(undefined)
      return Effect.tryPromise(() => readFile(join(dir!, "build.json"), "utf8")).pipe(
        Effect.map((t) => (manifest = JSON.parse(t) as Manifest)),
        Effect.orElseSucceed(() => undefined)
      )
    })
    // Bytes read once per file and encoding, then kept (the whole console is a few hundred kB).
    const cache = new Map<string, Promise<Uint8Array>>()
    const bytesOf = (file: string) => {
      let p = cache.get(file)
      if (p === undefined) {
        p = readFile(join(dir!, file))
        p.catch(() => cache.delete(file))
        cache.set(file, p)
      }
      return p
    }

    const serve = (name: string) =>
      Effect.gen(function*() {
        const manifest = yield* load
        if (manifest === undefined) {
          return noStoreError(503, "Service Unavailable", "The console is not built: run `npm run build` (or `npm start`)", RETRY_AFTER)
        }
        const file = Object.hasOwn(manifest.files, name) ? manifest.files[name] : undefined
        if (file === undefined) return noStoreError(404, "Not Found", "Not Found")
        const request = yield* HttpServerRequest.HttpServerRequest
        const encoding = pickEncoding(request.headers["accept-encoding"])
        const etag = etagFor(file.etag, encoding)
        const headers: Record<string, string> = {
          "cache-control": name === "index.html" ? "no-cache" : IMMUTABLE,
          etag,
          vary: "accept-encoding",
          "content-security-policy": CONSOLE_CSP,
          "x-content-type-options": "nosniff",
          "referrer-policy": "no-referrer",
          "cross-origin-opener-policy": "same-origin-allow-popups"
        }
        if (notModified(request.headers["if-none-match"], etag)) return HttpServerResponse.empty({ status: 304, headers })
        if (encoding !== "identity") headers["content-encoding"] = encoding
        const suffix = encoding === "br" ? ".br" : encoding === "gzip" ? ".gz" : ""
        const body = yield* Effect.tryPromise(() => bytesOf(name + suffix))
        return HttpServerResponse.uint8Array(body, { headers, contentType: file.type })
      }).pipe(Effect.catch(() => Effect.succeed(noStoreError(503, "Service Unavailable", "The console's files could not be read", RETRY_AFTER))))

    yield* router.add("GET", "/", serve("index.html"))
    yield* router.add(
      "GET",
      "/console/:file",
      Effect.flatMap(HttpRouter.params, (params) => serve(params.file ?? ""))
    )
  })
)
