/**
 * Ids for rows appended in bulk (data records): UUIDv7 (RFC 9562), whose first 48 bits are the
 * time in milliseconds, so a new row's key sorts after the rows before it and the primary-key
 * index grows at its right edge. With random (v4) ids every insert lands on a random page of that
 * index, and the cost grows with the table: 1,000 rows of 2 KB in one transaction cost 26 -> 38
 * ms of CPU as the table went from 20,000 to 200,000 rows, and 17-22 ms throughout with v7
 * (@libsql/client's driver alone, bench/PROFILE.md).
 *
 * `uuid`'s own random source is one crypto.getRandomValues call per id (2.1 us each); a pool
 * refilled 256 ids at a time brings an id to about 0.5 us. Ids made in the same millisecond
 * carry random bits after the time, so they are unique but not ordered among themselves.
 */
import { randomFillSync } from "node:crypto"
import { v7 } from "uuid"

const POOL_BYTES = 256 * 16
const pool = new Uint8Array(POOL_BYTES)
let next = POOL_BYTES

const options = {
  rng: (): Uint8Array => {
    if (next === POOL_BYTES) {
      randomFillSync(pool)
      next = 0
    }
    // A view: uuid reads the bytes into the id's text before it returns; each slot is used once.
    const bytes = pool.subarray(next, next + 16)
    next += 16
    return bytes
  }
}

/** A new UUIDv7 in its canonical lowercase text form. */
export const timeOrderedUuid = (): string => v7(options)
