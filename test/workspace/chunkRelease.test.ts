import { describe, expect, it } from "@effect/vitest"
import { makeChunkRelease, RELEASE_EVERY_BYTES } from "../../src/workspace/embedded/chunkRelease.js"

describe("a download's chunk buffers released every 16 MiB (chunkRelease.ts)", () => {
  it("collects the young generation once per 16 MiB read, across downloads", () => {
    const calls: Array<unknown> = []
    const read = makeChunkRelease((options) => calls.push(options))
    const chunk = 256 * 1024
    // Two downloads interleaved: 64 chunks (16 MiB) between collections, whoever read them.
    for (let i = 0; i < 63; i++) read(chunk)
    expect(calls).toEqual([])
    read(chunk)
    expect(calls).toEqual([{ type: "minor" }])
    for (let i = 0; i < 3 * 64; i++) read(chunk)
    expect(calls.length).toBe(4)
    expect(RELEASE_EVERY_BYTES).toBe(64 * chunk)
  })

  it("without --expose-gc (no collector) it does nothing", () => {
    const read = makeChunkRelease(undefined)
    expect(() => {
      for (let i = 0; i < 1000; i++) read(1 << 20)
    }).not.toThrow()
  })
})
