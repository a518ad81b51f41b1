/**
 * Failed authentications per subject (a client address, or the hash of a presented key), as
 * token buckets: a subject may fail `burst` times at once, then once per `refillMs`; past that
 * it is answered 429 (with Retry-After). Successes cost nothing and refund nothing. One process
 * serves one cell, so an in-process map is enough; it keeps at most `maxAddresses` entries,
 * dropping refilled ones first, then the oldest. What is refused when is ./server.ts's call.
 */
export interface FailureLimiter {
  /** Milliseconds until `address` may try again; 0 when it may now. */
  readonly retryAfterMs: (address: string, now?: number) => number
  readonly recordFailure: (address: string, now?: number) => void
}

interface Bucket {
  tokens: number
  at: number
}

export const makeFailureLimiter = (options: {
  readonly burst: number
  readonly refillMs: number
  readonly maxAddresses?: number
}): FailureLimiter => {
  const { burst, refillMs } = options
  const maxAddresses = options.maxAddresses ?? 10_000
  const buckets = new Map<string, Bucket>()

  const refilled = (bucket: Bucket, now: number): Bucket => {
    const gained = Math.floor((now - bucket.at) / refillMs)
    if (gained <= 0) return bucket
    const tokens = Math.min(burst, bucket.tokens + gained)
    return { tokens, at: tokens === burst ? now : bucket.at + gained * refillMs }
  }

  const prune = (now: number) => {
    for (const [address, bucket] of buckets) {
      if (buckets.size < maxAddresses) return
      if (refilled(bucket, now).tokens >= burst) buckets.delete(address)
    }
    // Still full: the oldest entries go (Map keeps insertion order).
    for (const address of buckets.keys()) {
      if (buckets.size < maxAddresses) return
      buckets.delete(address)
    }
  }

  return {
    retryAfterMs: (address, now = Date.now()) => {
      const bucket = buckets.get(address)
      if (bucket === undefined) return 0
      const current = refilled(bucket, now)
      return current.tokens >= 1 ? 0 : Math.max(1, current.at + refillMs - now)
    },
    recordFailure: (address, now = Date.now()) => {
      const known = buckets.get(address)
      if (known === undefined && buckets.size >= maxAddresses) prune(now)
      const current = known === undefined ? { tokens: burst, at: now } : refilled(known, now)
      // Re-inserted so that the map's order is the order of last failure.
      buckets.delete(address)
      buckets.set(address, { tokens: Math.max(0, current.tokens - 1), at: current.at })
    }
  }
}
