/**
 * The keys bearer tokens are verified with (SVC_JWT_JWKS), cached: never fetched or read per
 * request.
 *
 * - A URL: jose's `createRemoteJWKSet`, which fetches on first use, keeps the set for 10 minutes,
 *   and fetches again at once for a token whose key it does not hold (a rotation), at most once
 *   per cooldown (SVC_JWT_JWKS_COOLDOWN_MS), with a timeout (SVC_JWT_JWKS_TIMEOUT_MS). Added
 *   here: after a failed fetch, no new one for a while (a flood of requests while the issuer is
 *   down makes no flood of fetches), and the last good set stays in use meanwhile.
 * - A file: read at start (a missing or malformed file stops the start), read again for a token
 *   whose key it does not hold (at most once per cooldown) and when 10 minutes old; a read that
 *   fails keeps the keys already held.
 */
import type { JWTVerifyGetKey } from "jose"
import { readFile } from "node:fs/promises"
import type { JwksSource } from "../config/IdentityConfig.js"

/** How long a key set is kept before it is fetched or read again. */
export const KEYS_MAX_AGE_MS = 10 * 60_000
/** After a failed fetch of a remote set, the least wait before the next. */
const FAILED_FETCH_BACKOFF_MS = 5_000

/** The keys cannot be had (the issuer's JWKS unreachable, malformed): not the token's fault. */
export class KeysUnavailable extends Error {
  readonly _tag = "KeysUnavailable"
}

export interface KeySetOptions {
  readonly fetchTimeoutMs: number
  readonly cooldownMs: number
  /** Told about a reload that failed (the keys already held stay in use). */
  readonly onWarning: (message: string) => void
}

type Jose = typeof import("jose")

const reason = (e: unknown) => (e instanceof Error ? e.message : String(e))

/** A failure of the key source, as opposed to a token no key matches. */
const isSourceFailure = (e: unknown) => {
  const code = (e as { code?: unknown } | null)?.code
  return typeof code !== "string" || !code.startsWith("ERR_") ||
    code === "ERR_JWKS_TIMEOUT" || code === "ERR_JWKS_INVALID" || code === "ERR_JOSE_GENERIC" || code === "ERR_JWK_INVALID"
}

/** Parses a JWKS document; throws a message fit for a start-up failure. */
const parseKeySet = (jose: Jose, text: string) => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new Error("is not JSON")
  }
  const keys = (json as { keys?: unknown } | null)?.keys
  if (!Array.isArray(keys)) throw new Error("is not a JSON Web Key Set ({\"keys\": [...]})")
  if (keys.length === 0) throw new Error("holds no keys")
  try {
    return jose.createLocalJWKSet(json as Parameters<Jose["createLocalJWKSet"]>[0])
  } catch (e) {
    throw new Error(`is not a valid JSON Web Key Set: ${reason(e)}`)
  }
}

const remoteKeys = (jose: Jose, url: URL, options: KeySetOptions): JWTVerifyGetKey => {
  const remote = jose.createRemoteJWKSet(url, {
    timeoutDuration: options.fetchTimeoutMs,
    cooldownDuration: options.cooldownMs,
    cacheMaxAge: KEYS_MAX_AGE_MS
  })
  let failedAt = -Infinity
  let failure: KeysUnavailable | undefined
  // The last good set, for use while the issuer cannot be reached.
  let stale: { readonly source: unknown; readonly keys: JWTVerifyGetKey } | undefined
  const staleKeys = () => {
    const jwks = remote.jwks()
    if (jwks === undefined) return undefined
    if (stale?.source !== jwks) stale = { source: jwks, keys: jose.createLocalJWKSet(jwks) }
    return stale.keys
  }
  const backoffMs = Math.min(FAILED_FETCH_BACKOFF_MS, Math.max(options.cooldownMs, 1000))
  return async (header, token) => {
    if (Date.now() - failedAt < backoffMs) {
      const keys = staleKeys()
      if (keys !== undefined) return keys(header, token)
      throw failure!
    }
    try {
      return await remote(header, token)
    } catch (e) {
      if (!isSourceFailure(e)) throw e
      // Requests that waited on the same fetch fail together: one warning.
      const first = Date.now() - failedAt >= backoffMs
      failedAt = Date.now()
      failure = new KeysUnavailable(`the key set at ${url.href} could not be fetched: ${reason(e)}`)
      if (first) options.onWarning(`${failure.message}${remote.jwks() !== undefined ? "; the keys already held stay in use" : ""}`)
      const keys = staleKeys()
      if (keys !== undefined) return keys(header, token)
      throw failure
    }
  }
}

const fileKeys = async (jose: Jose, path: string, options: KeySetOptions): Promise<JWTVerifyGetKey> => {
  const read = async () => parseKeySet(jose, await readFile(path, "utf8"))
  let keys = await read()
  let loadedAt = Date.now()
  let pending: Promise<void> | undefined
  const reload = () =>
    (pending ??= read().then(
      (next) => {
        keys = next
      },
      (e) => options.onWarning(`SVC_JWT_JWKS: reading ${path} again failed (${reason(e)}); the keys already held stay in use`)
    ).finally(() => {
      // A failed read also counts: the next try waits for the cooldown.
      loadedAt = Date.now()
      pending = undefined
    }))
  return async (header, token) => {
    if (Date.now() - loadedAt >= KEYS_MAX_AGE_MS) await reload()
    try {
      return await keys(header, token)
    } catch (e) {
      if ((e as { code?: unknown }).code !== "ERR_JWKS_NO_MATCHING_KEY" || Date.now() - loadedAt < options.cooldownMs) throw e
      await reload()
      return keys(header, token)
    }
  }
}

/**
 * The key set of `source`. A file is read now: a missing or malformed one fails with a message
 * that names SVC_JWT_JWKS (the start stops there).
 */
export const makeKeySet = async (source: JwksSource, options: KeySetOptions): Promise<JWTVerifyGetKey> => {
  const jose = await import("jose")
  if (source._tag === "Url") return remoteKeys(jose, source.url, options)
  try {
    return await fileKeys(jose, source.path, options)
  } catch (e) {
    const code = (e as { code?: unknown }).code
    const why = code === "ENOENT" ? "no such file" : typeof code === "string" ? `cannot be read (${code})` : reason(e)
    throw new Error(`SVC_JWT_JWKS=${JSON.stringify(source.path)}: ${why}`)
  }
}
