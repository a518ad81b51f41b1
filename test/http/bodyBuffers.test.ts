/**
 * The reused body buffers (src/http/input/bodyBuffers.ts): a buffer is lent to one body at a
 * time, whatever order bodies are taken and released in (a second release of the same lease does
 * nothing); each lease is exactly its body's length; what is kept stays within KEPT_BYTES and is
 * dropped when idle; sizes outside the pooled range are not lent.
 */
import * as fc from "fast-check"
import { afterEach, describe, expect, it, vi } from "vitest"
import {
  type BodyBuffer,
  dropBodyBuffers,
  IDLE_DROP_MS,
  KEPT_BYTES,
  keptBodyBuffers,
  MAX_POOLED_BYTES,
  takeBodyBuffer
} from "../../src/http/input/bodyBuffers.js"
import { LARGE_INPUT } from "../../src/lib/eventLoop.js"

afterEach(() => {
  vi.useRealTimers()
})

/** Starts from an empty pool, its idle clock on the timers the test uses. */
const drain = () => dropBodyBuffers()

/** Whether two views share any byte of memory. */
const overlap = (a: Uint8Array, b: Uint8Array) =>
  a.buffer === b.buffer && a.byteOffset < b.byteOffset + b.byteLength && b.byteOffset < a.byteOffset + a.byteLength

describe("reused body buffers", () => {
  it("lends a buffer to one body at a time, in any order of takes, releases and second releases", () => {
    drain()
    const length = fc.integer({ min: LARGE_INPUT, max: MAX_POOLED_BYTES })
    const op = fc.oneof(
      fc.record({ take: length }),
      fc.record({ release: fc.nat() }),
      fc.record({ again: fc.nat() })
    )
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const out: Array<{ readonly lease: BodyBuffer; readonly mark: number }> = []
        const released: Array<BodyBuffer> = []
        let mark = 0
        for (const o of ops) {
          if ("take" in o) {
            const lease = takeBodyBuffer(o.take)!
            expect(lease.bytes.byteLength).toBe(o.take)
            for (const other of out) expect(overlap(lease.bytes, other.lease.bytes)).toBe(false)
            // Written in full: a buffer lent twice would show another body's mark below.
            lease.bytes.fill(++mark % 256)
            out.push({ lease, mark: mark % 256 })
          } else if ("release" in o && out.length > 0) {
            const [gone] = out.splice(o.release % out.length, 1)
            gone!.lease.release()
            released.push(gone!.lease)
          } else if ("again" in o && released.length > 0) {
            released[o.again % released.length]!.release()
          }
          for (const { lease, mark } of out) {
            expect(lease.bytes[0]).toBe(mark)
            expect(lease.bytes[lease.bytes.byteLength - 1]).toBe(mark)
          }
          expect(keptBodyBuffers().bytes).toBeLessThanOrEqual(KEPT_BYTES)
        }
        for (const { lease } of out) lease.release()
      }),
      { numRuns: 300 }
    )
  })

  it("reuses a released buffer for the next body of its size class", () => {
    drain()
    const first = takeBodyBuffer(1_400_000)!
    const memory = first.bytes.buffer
    first.release()
    first.release()
    const second = takeBodyBuffer(1_500_000)!
    expect(second.bytes.buffer).toBe(memory)
    // The second release of `first` put nothing back: a third body gets a buffer of its own.
    const third = takeBodyBuffer(1_500_000)!
    expect(third.bytes.buffer).not.toBe(memory)
    second.release()
    third.release()
  })

  it("keeps at most KEPT_BYTES, and nothing once idle", () => {
    vi.useFakeTimers()
    drain()
    const leases = Array.from({ length: 6 }, () => takeBodyBuffer(MAX_POOLED_BYTES)!)
    for (const lease of leases) lease.release()
    expect(keptBodyBuffers().bytes).toBe(KEPT_BYTES)
    vi.advanceTimersByTime(IDLE_DROP_MS - 100)
    // A release restarts the idle clock.
    const again = takeBodyBuffer(MAX_POOLED_BYTES)!
    again.release()
    vi.advanceTimersByTime(IDLE_DROP_MS - 100)
    expect(keptBodyBuffers().buffers).toBeGreaterThan(0)
    vi.advanceTimersByTime(200)
    expect(keptBodyBuffers()).toEqual({ buffers: 0, bytes: 0 })
  })

  it("lends nothing for sizes outside the pooled range", () => {
    for (const length of [0, 1, LARGE_INPUT - 1, MAX_POOLED_BYTES + 1, 64 * 1024 * 1024, NaN, -1, 1.5e6 + 0.5, Infinity]) {
      expect(takeBodyBuffer(length), String(length)).toBeUndefined()
    }
  })
})
