/**
 * A constant-time test of a secret sent by a caller (a bearer token, a key header) against the
 * configured one: both sides are hashed with SHA-256 first, so the compared buffers always have
 * the same length (`timingSafeEqual` throws otherwise) and the time taken says nothing about the
 * secret's length or content.
 */
import { createHash, timingSafeEqual } from "node:crypto"

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest()

export const secretMatcher = (expected: string): (given: string) => boolean => {
  const want = digest(expected)
  return (given) => timingSafeEqual(want, digest(given))
}
