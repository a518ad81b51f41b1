/**
 * The security headers of an HTML page the service renders itself (the API reference at /docs
 * and /workspace/docs), the same set the task console carries (src/gateway/console.ts): a
 * Content-Security-Policy, `nosniff`, no Referer, a browsing context of its own, no framing.
 *
 * The reference page (Effect's HttpApiScalar) inlines its scripts, so its policy allows exactly
 * those scripts by their SHA-256 hashes, computed from the page itself: no other inline or
 * remote script runs. Scalar adds its styles at run time (inline `<style>`), hence
 * `'unsafe-inline'` for styles only; requests go to this origin only (its "try it" client).
 */
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { createHash } from "node:crypto"

const INLINE_SCRIPT = /<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi

/** The policy of a page whose inline scripts are those of `html`. */
export const pagePolicy = (html: string): string => {
  const hashes = [...html.matchAll(INLINE_SCRIPT)].map((m) => `'sha256-${createHash("sha256").update(m[1]!, "utf8").digest("base64")}'`)
  return [
    "default-src 'none'",
    `script-src 'self' ${hashes.join(" ")}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self' data:",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'"
  ].join("; ")
}

/** What every such page carries besides its policy (as the console does). */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "x-frame-options": "DENY"
}

const secured = new WeakMap<HttpServerResponse.HttpServerResponse, HttpServerResponse.HttpServerResponse>()

/**
 * `response` with the page's security headers when it is an HTML page (its policy computed once
 * per response object: the reference page is rendered once and served as the same response).
 * Anything else passes unchanged.
 */
export const withPageSecurity = (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
  const known = secured.get(response)
  if (known !== undefined) return known
  const body = response.body
  if (body._tag !== "Uint8Array" || !body.contentType.startsWith("text/html")) return response
  const html = body.text ?? Buffer.from(body.body).toString("utf8")
  const result = HttpServerResponse.setHeaders(response, { ...PAGE_HEADERS, "content-security-policy": pagePolicy(html) })
  secured.set(response, result)
  return result
}
