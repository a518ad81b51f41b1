/**
 * A raw upload's spool hashes the body on the way only when the digest will be asked for (a
 * keyed write fingerprints it); otherwise the digest, if ever asked, is read back from the spool.
 * Both must be the SHA-256 of exactly the bytes sent, at every size around the read-back's 1 MiB
 * slices. A spool kept for the store (the file it will sync and rename) is flushed early, every
 * 8 MiB written, so that sync waits for the last few MiB only.
 */
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import { createHash, randomBytes } from "node:crypto"
import type { FileHandle } from "node:fs/promises"
import { mkdtempSync, rmSync } from "node:fs"
import { IncomingMessage } from "node:http"
import { Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { spoolBody, spoolIncoming } from "../../src/http/input/rawBody.js"

const MiB = 1024 * 1024
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")
const dir = mkdtempSync(join(tmpdir(), "spool-digest-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const digestOf = (bytes: Uint8Array, hashOnTheWay: boolean, spoolDir?: string) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const request = HttpServerRequest.fromWeb(new Request("http://localhost/v1/tasks/t/files/raw", { method: "POST", body: bytes }))
    const body = yield* spoolBody(request, 64 * MiB, spoolDir, hashOnTheWay)
    expect(body.length).toBe(bytes.byteLength)
    // Asked twice: the read-back is not spent by the first ask.
    const first = yield* body.sha256
    expect(yield* body.sha256).toBe(first)
    return first
  })))

describe("a raw upload's digest", () => {
  for (const size of [0, 1, MiB - 1, MiB, MiB + 1, 3 * MiB + 12_345]) {
    it(`is the SHA-256 of the ${size} bytes sent, hashed on the way or read back`, async () => {
      const bytes = randomBytes(size)
      expect(await digestOf(bytes, true)).toBe(sha(bytes))
      expect(await digestOf(bytes, false)).toBe(sha(bytes))
      expect(await digestOf(bytes, false, dir)).toBe(sha(bytes))
    })
  }
})

/** A file handle that keeps nothing and counts its flushes, and how much was written at each. */
const countingHandle = () => {
  let written = 0
  const flushedAt: Array<number> = []
  const handle = {
    write: (_: Buffer, __: number, length: number) => {
      written += length
      return Promise.resolve({ bytesWritten: length })
    },
    datasync: () => {
      flushedAt.push(written)
      return new Promise<void>((resolve) => setTimeout(resolve, 5))
    }
  } as unknown as FileHandle
  return { handle, flushedAt }
}

/** A request whose body is `count` chunks of `size` bytes, then its end, all already received. */
const requestOf = (count: number, size: number) => {
  const message = new IncomingMessage(new Socket())
  for (let i = 0; i < count; i++) message.push(Buffer.alloc(size, i))
  message.push(null)
  message.complete = true
  return message
}

describe("a raw upload's spool kept for the store", () => {
  it("is flushed to disk while the body still arrives, not only after it", async () => {
    const { handle, flushedAt } = countingHandle()
    const length = await spoolIncoming(requestOf(30, MiB), handle, undefined, 64 * MiB, true)
    expect(length).toBe(30 * MiB)
    expect(flushedAt.length).toBeGreaterThanOrEqual(1)
    expect(flushedAt[0]).toBeLessThan(30 * MiB)
  })

  it("is not flushed early when it is a temporary file the store copies from", async () => {
    const { handle, flushedAt } = countingHandle()
    expect(await spoolIncoming(requestOf(30, MiB), handle, undefined, 64 * MiB, false)).toBe(30 * MiB)
    expect(flushedAt).toEqual([])
  })
})

describe("a raw upload's spool whose early flush fails", () => {
  // Linux reports a failed writeback once per open file: the fdatasync that meets it gets EIO,
  // and the store's fsync after the last byte, on the same descriptor, then succeeds although the
  // pages that failed may never reach the disk. The early flush's error must fail the spool (a
  // 503, nothing stored), not be left for the final sync, which would answer 201 for them.
  for (const delayMs of [0, 50]) {
    it(`fails with the flush's error, not the length (the flush failing after ${delayMs} ms)`, async () => {
      const handle = {
        write: (_: Buffer, __: number, length: number) => Promise.resolve({ bytesWritten: length }),
        datasync: () => new Promise<void>((_, reject) => setTimeout(() => reject(new Error("EIO: i/o error, fdatasync")), delayMs))
      } as unknown as FileHandle
      await expect(spoolIncoming(requestOf(30, MiB), handle, undefined, 64 * MiB, true)).rejects.toThrow(/EIO/)
    })
  }
})
