import { describe, expect, it } from "@effect/vitest"
import { BODY_RELEASE_EVERY_BYTES, DOWNLOAD_RELEASE_EVERY_BYTES, makeBufferRelease } from "../../src/lib/bufferRelease.js"

describe("dead chunk buffers released by a young-generation collection (bufferRelease.ts)", () => {
  it("collects once per `every` bytes, across whoever counted them", () => {
    const calls: Array<unknown> = []
    const done = makeBufferRelease((options) => calls.push(options), DOWNLOAD_RELEASE_EVERY_BYTES)
    const chunk = 256 * 1024
    // Two downloads interleaved: 64 chunks (16 MiB) between collections, whoever read them.
    for (let i = 0; i < 63; i++) done(chunk)
    expect(calls).toEqual([])
    done(chunk)
    expect(calls).toEqual([{ type: "minor" }])
    for (let i = 0; i < 3 * 64; i++) done(chunk)
    expect(calls.length).toBe(4)
    expect(DOWNLOAD_RELEASE_EVERY_BYTES).toBe(64 * chunk)
    expect(BODY_RELEASE_EVERY_BYTES).toBe(64 * 64 * 1024)
  })

  it("without --expose-gc (no collector) it does nothing", () => {
    const done = makeBufferRelease(undefined, 1)
    expect(() => {
      for (let i = 0; i < 1000; i++) done(1 << 20)
    }).not.toThrow()
  })
})
