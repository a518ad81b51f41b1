/**
 * Ids for rows appended in bulk (data records): UUIDv7 (RFC 9562), whose first 48 bits are the
 * time in milliseconds, so a new row's key sorts after the rows before it and the primary-key
 * index grows at its right edge. With random (v4) ids every insert lands on a random page of that
 * index, and the cost grows with the table: 1,000 rows of 2 KB in one transaction cost 26 -> 38
 * ms of CPU as the table went from 20,000 to 200,000 rows, and 17-22 ms throughout with v7
 * (@libsql/client's driver alone, bench/PROFILE.md).
 *
 * `uuid`'s own random source is one crypto.getRandomValues call per id (2.1 us each); a pool
 * refilled 256 ids at a time brings an id to about 0.5 us. Given its bytes, `uuid` no longer
 * keeps its counter, so it is kept here as `uuid` keeps it (RFC 9562's method 1): a random start
 * in each new millisecond, one more for each id in the same one (and in any the clock went back
 * to), so the ids this process makes always increase, a batch's in the order of its rows.
 */
import { randomFillSync } from "node:crypto"
import { v7 } from "uuid"

const POOL_BYTES = 256 * 16
const pool = new Uint8Array(POOL_BYTES)
let next = POOL_BYTES

/** 16 random bytes, a view of the pool: uuid reads them into the id's text before it returns. */
const randomBytes = (): Uint8Array => {
  if (next === POOL_BYTES) {
    randomFillSync(pool)
    next = 0
  }
  const bytes = pool.subarray(next, next + 16)
  next += 16
  return bytes
}

let msecs = -Infinity
let seq = 0

/** A new UUIDv7 in its canonical lowercase text form, after every one made before it. */
export const timeOrderedUuid = (): string => {
  const random = randomBytes()
  const now = Date.now()
  if (now > msecs) {
    msecs = now
    // 31 random bits: room for 2^31 more ids in this millisecond.
    seq = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!
  } else {
    seq = (seq + 1) | 0
    if (seq === 0) msecs++
  }
  return v7({ random, msecs, seq })
}
