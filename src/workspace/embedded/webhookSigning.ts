/**
 * Standard Webhooks 1.0 signing: `webhook-signature` is `v1,<base64 HMAC-SHA256 of
 * "<webhook-id>.<webhook-timestamp>.<body>">` keyed with the secret's bytes (the base64 after
 * `whsec_`); several signatures are separated by spaces (a rotation sends the old and the new).
 * Tests verify with the reference library (`standardwebhooks` on npm), not with this code.
 */
import { createHmac } from "node:crypto"

const SECRET_PREFIX = "whsec_"

/** The key bytes of a `whsec_...` secret. */
export const secretKey = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64")

export const signature = (secret: string, webhookId: string, timestampSeconds: number, body: string): string =>
  `v1,${createHmac("sha256", secretKey(secret)).update(`${webhookId}.${timestampSeconds}.${body}`, "utf8").digest("base64")}`

/** The three Standard Webhooks headers for one attempt, signed with every secret given. */
export const signedHeaders = (
  secrets: ReadonlyArray<string>,
  webhookId: string,
  timestampSeconds: number,
  body: string
): Record<string, string> => ({
  "webhook-id": webhookId,
  "webhook-timestamp": String(timestampSeconds),
  "webhook-signature": secrets.map((s) => signature(s, webhookId, timestampSeconds, body)).join(" ")
})
