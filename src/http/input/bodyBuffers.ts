/**
 * Reused buffers for large request bodies of a declared length (a base64 upload, an ingest batch).
 *
 * A body read whole is a fresh buffer outside V8's heap, and V8 13 counts such external memory
 * towards the old generation's limit: with each 1 MiB upload's 1.4 MB body a new buffer, S3 ran
 * a mark-compact every 5 uploads (each about 4 ms paused and 12 ms of marking steps, for 19 MB of
 * live heap), and the collector was a quarter of the gateway's CPU. With the buffers reused,
 * nothing new is allocated for the body: 21 -> 14 mark-compacts per 100 uploads, 14.0 -> 11.9 ms
 * of CPU per upload (bench/PROFILE.md, issue 36's eleventh pass).
 *
 * A buffer is lent for exactly one body and taken back by `release` once nothing reads the bytes
 * any more (the parse and the base64 decode are done: the parsed value holds copies); a release
 * after the first does nothing, so a buffer is never lent twice at once. Sizes are powers of two
 * from LARGE_INPUT to MAX_POOLED_BYTES; at most KEPT_BYTES are kept, and all are dropped once
 * none was taken back for IDLE_DROP_MS, so an idle cell keeps nothing.
 */
import { LARGE_INPUT } from "../../lib/eventLoop.js"

/** The largest body read into a reused buffer: an ingest batch of 1,000 2 KB events is 2.1 MB. */
export const MAX_POOLED_BYTES = 4 * 1024 * 1024

/** Bytes of free buffers kept at most (two of the largest, or four uploads of 1 MiB files). */
export const KEPT_BYTES = 8 * 1024 * 1024

/** Free buffers are dropped after this long without a body handed back. */
export const IDLE_DROP_MS = 10_000

export interface BodyBuffer {
  /** Exactly `length` bytes, for this body alone until `release`. */
  readonly bytes: Buffer
  /** Takes the buffer back; the bytes must not be read after. Once only: later calls do nothing. */
  readonly release: () => void
}

const free = new Map<number, Array<Buffer>>()
let keptBytes = 0

let idleTimer: ReturnType<typeof setTimeout> | undefined

/** Drops every free buffer (when idle; tests call it to start from an empty pool). */
export const dropBodyBuffers = (): void => {
  free.clear()
  keptBytes = 0
  if (idleTimer !== undefined) clearTimeout(idleTimer)
  idleTimer = undefined
}

/** The power of two that holds `length` (at least LARGE_INPUT). */
const classOf = (length: number): number => {
  let size = LARGE_INPUT
  while (size < length) size *= 2
  return size
}

/**
 * A buffer of `bytes` outside V8's heap, or undefined when that much cannot be had (a declared
 * length past what the process can allocate, let in under a huge SVC_MAX_BODY_BYTES): the reader
 * then collects the chunks as they come rather than failing the request before a byte.
 */
export const allocatedOrNone = (bytes: number): Buffer | undefined => {
  try {
    return Buffer.allocUnsafeSlow(bytes)
  } catch {
    return undefined
  }
}

/**
 * A buffer for a body of `length` bytes, or undefined when bodies of that size are not pooled
 * (below LARGE_INPUT, or above MAX_POOLED_BYTES) or the memory cannot be had: the caller
 * allocates one of its own then.
 */
export const takeBodyBuffer = (length: number): BodyBuffer | undefined => {
  if (!Number.isSafeInteger(length) || length < LARGE_INPUT || length > MAX_POOLED_BYTES) return undefined
  const size = classOf(length)
  const kept = free.get(size)?.pop()
  if (kept !== undefined) keptBytes -= size
  const whole = kept ?? allocatedOrNone(size)
  if (whole === undefined) return undefined
  let lent = true
  return {
    bytes: whole.subarray(0, length),
    release: () => {
      if (!lent) return
      lent = false
      if (keptBytes + size > KEPT_BYTES) return
      const list = free.get(size)
      if (list === undefined) free.set(size, [whole])
      else list.push(whole)
      keptBytes += size
      if (idleTimer === undefined) idleTimer = setTimeout(dropBodyBuffers, IDLE_DROP_MS).unref()
      else idleTimer.refresh()
    }
  }
}

/** What is kept now (tests). */
export const keptBodyBuffers = (): { readonly buffers: number; readonly bytes: number } => {
  let buffers = 0
  for (const list of free.values()) buffers += list.length
  return { buffers, bytes: keptBytes }
}
