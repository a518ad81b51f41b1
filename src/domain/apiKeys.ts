/**
 * Agent API keys (spec §4, §5.7): only a SHA-256 hash of a key is ever stored or sent. The
 * gateway hashes the key an agent presents and asks the workspace for the agent holding that
 * hash; stores compare hashes in constant time.
 */
import { createHash, timingSafeEqual } from "node:crypto"
import { KEY_HASH_PATTERN } from "../upstream/registry.js"

/** A key's SHA-256, as 64 lowercase hex digits: the only form a key is stored or looked up in. */
export const hashApiKey = (apiKey: string): string => createHash("sha256").update(apiKey, "utf8").digest("hex")

/** The shape of a key hash (what the workspace API accepts). */
export { KEY_HASH_PATTERN }

/**
 * Whether two key hashes are equal, in time independent of where they differ. Hashes of any
 * other shape are unequal (still compared at the fixed length, so nothing about them leaks).
 */
export const sameKeyHash = (a: string, b: string): boolean => {
  const ok = KEY_HASH_PATTERN.test(a) && KEY_HASH_PATTERN.test(b)
  const x = Buffer.from(ok ? a : "0".repeat(64), "hex")
  const y = Buffer.from(ok ? b : "f".repeat(64), "hex")
  return timingSafeEqual(x, y) && ok
}
