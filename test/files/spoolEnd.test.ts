/**
 * A raw upload's body is written to its spool file a chunk at a time, the request paused while a
 * chunk is written. Node emits the request's 'end' once its buffer is empty, paused or not, so the
 * end could come while the last chunk's write was still in the thread pool: the spool was taken as
 * complete and read back short. Behind a workspace service the store then kept an empty document
 * for a 21-byte upload that was answered 201 (seen in CI under load). Here the file's writes are
 * slow on purpose: the spool must not end before every byte is in it.
 */
import { createHash } from "node:crypto"
import type { FileHandle } from "node:fs/promises"
import { IncomingMessage } from "node:http"
import { Socket } from "node:net"
import { describe, expect, it } from "vitest"
import { spoolIncoming } from "../../src/http/input/rawBody.js"

/** A file handle whose writes land `delayMs` after they are asked for, into `file`. */
const slowHandle = (file: Array<number>, delayMs: number) => ({
  write: (buffer: Buffer, offset: number, length: number, position: number) =>
    new Promise<{ bytesWritten: number }>((resolve) =>
      setTimeout(() => {
        for (let i = 0; i < length; i++) file[position + i] = buffer[offset + i]!
        resolve({ bytesWritten: length })
      }, delayMs))
}) as unknown as FileHandle

/** A request whose body is `chunks`, then its end, all already received. */
const requestOf = (chunks: ReadonlyArray<string>) => {
  const message = new IncomingMessage(new Socket())
  for (const chunk of chunks) message.push(Buffer.from(chunk))
  message.push(null)
  message.complete = true
  return message
}

describe("a raw upload's spool", () => {
  it("ends only when every chunk is written, however slow the writes", async () => {
    for (const chunks of [["%PDF-1.4 a small file"], ["first ", "second ", "third"]]) {
      const file: Array<number> = []
      const length = await spoolIncoming(requestOf(chunks), slowHandle(file, 30), createHash("sha256"), 1024)
      const body = chunks.join("")
      expect(length).toBe(body.length)
      // What the spool holds when it says it is done: read back at once, as the store does.
      expect(Buffer.from(file).toString()).toBe(body)
    }
  })
})

describe("a raw upload's spool whose last write fails", () => {
  it("fails with the disk's error, not the length, even when the end came first", async () => {
    const failing = {
      write: () => new Promise((_, reject) => setTimeout(() => reject(new Error("ENOSPC: no space left on device")), 30))
    } as unknown as FileHandle
    await expect(spoolIncoming(requestOf(["%PDF-1.4 a small file"]), failing, createHash("sha256"), 1024)).rejects.toThrow(/ENOSPC/)
  })
})
