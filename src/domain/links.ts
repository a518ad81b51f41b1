/**
 * Decision links (README "Decision links"): an approve and a reject link for one named person,
 * bound to the tenant, the task, the step, the decision and an expiry. Pure: the token's form,
 * its signature, the expiry's ISO 8601 duration. The store keeps one row per pair (who, what,
 * until when, used or revoked); the token names the row and carries an HMAC-SHA256 over every
 * bound field, so a token whose id or signature was altered, truncated or made with another key
 * names nothing.
 */
import { createHmac, timingSafeEqual } from "node:crypto"

export type LinkDecision = "approve" | "reject"

/** The letter a token carries for its decision (`<pairId>.<a|r>.<signature>`). */
const LETTER: Readonly<Record<LinkDecision, string>> = { approve: "a", reject: "r" }

/** What a link is bound to: every field is under the signature. */
export interface LinkBinding {
  readonly pairId: string
  readonly tenantId: string
  readonly taskId: string
  readonly stepId: string
  readonly decision: LinkDecision
  readonly actor: string
  /** ISO 8601 instant, as stored. */
  readonly expiresAt: string
}

/** 16 random bytes (base64url, 22 characters): a pair's id. */
export const PAIR_ID_PATTERN = /^[A-Za-z0-9_-]{21}[AQgw]$/
/** A token: pair id, decision letter, 32-byte signature (43 characters), nothing else. */
const TOKEN = /^([A-Za-z0-9_-]{21}[AQgw])\.([ar])\.([A-Za-z0-9_-]{42}[AEIMQUYcgkosw048])$/

export interface ParsedToken {
  readonly pairId: string
  readonly decision: LinkDecision
  readonly signature: Buffer
}

/**
 * The token's parts, or undefined when it is not one (wrong length, alphabet, separators, or a
 * base64url that is not the canonical spelling of its bytes: the regular expressions above
 * admit only the last characters whose unused bits are zero).
 */
export const parseToken = (token: string): ParsedToken | undefined => {
  const m = TOKEN.exec(token)
  if (m === null) return undefined
  return { pairId: m[1]!, decision: m[2] === "a" ? "approve" : "reject", signature: Buffer.from(m[3]!, "base64url") }
}

/** The signed text: every bound field, as a JSON array (no field can run into the next). */
const signedText = (b: LinkBinding) =>
  JSON.stringify(["decision-link/v1", b.pairId, b.tenantId, b.taskId, b.stepId, b.decision, b.actor, b.expiresAt])

const signatureOf = (key: Uint8Array, binding: LinkBinding): Buffer =>
  createHmac("sha256", key).update(signedText(binding), "utf8").digest()

/** The token of `binding`, signed with `key` (the current one). */
export const signLink = (key: Uint8Array, binding: LinkBinding): string =>
  `${binding.pairId}.${LETTER[binding.decision]}.${signatureOf(key, binding).toString("base64url")}`

/**
 * Whether `token` was made by one of `keys` for exactly `binding`. Every key is tried, in time
 * independent of where the signatures differ (fixed-length digests, timingSafeEqual).
 */
export const verifyLink = (keys: ReadonlyArray<Uint8Array>, parsed: ParsedToken, binding: LinkBinding): boolean => {
  if (parsed.pairId !== binding.pairId || parsed.decision !== binding.decision || parsed.signature.length !== 32) return false
  let ok = false
  for (const key of keys) ok = timingSafeEqual(signatureOf(key, binding), parsed.signature) || ok
  return ok
}

export const HOUR_MS = 3_600_000
export const DAY_MS = 24 * HOUR_MS
/** `--expires-in` unset: 72 hours. */
export const DEFAULT_LINK_TTL_MS = 72 * HOUR_MS
/** The longest a link may live: 30 days. */
export const MAX_LINK_TTL_MS = 30 * DAY_MS

const DURATION = /^P(?:(\d{1,6})W)?(?:(\d{1,6})D)?(?:T(?:(\d{1,6})H)?(?:(\d{1,6})M)?(?:(\d{1,9})S)?)?$/

/**
 * An ISO 8601 duration (`PT72H`, `P3D`, `P1DT12H`, `PT90M`, `P1W`) in milliseconds, between one
 * second and 30 days; else why not. Years and months are refused: they have no fixed length.
 */
export const parseLinkTtl = (text: string): { readonly ms: number } | { readonly problem: string } => {
  const shown = JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text)
  const m = DURATION.exec(text)
  if (m === null || text === "P" || text.endsWith("T")) {
    return /^P.*[YM]/.test(text) && !/T.*M/.test(text)
      ? { problem: `${shown}: years and months have no fixed length; give days or hours (P30D, PT72H)` }
      : { problem: `${shown} is not an ISO 8601 duration such as PT72H, P3D or P1DT12H` }
  }
  const [w, d, h, min, s] = m.slice(1).map((x) => (x === undefined ? 0 : Number(x)))
  const ms = ((((w! * 7 + d!) * 24 + h!) * 60 + min!) * 60 + s!) * 1000
  if (ms < 1000) return { problem: `${shown}: a link must live at least one second` }
  if (ms > MAX_LINK_TTL_MS) return { problem: `${shown} is longer than 30 days (P30D), the longest a link may live` }
  return { ms }
}
