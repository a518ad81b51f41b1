/**
 * Where a body's inexact number is (src/api/jsonNumbers.ts) is worked out by a second parse of
 * the body, which leaves its long strings out (src/http/input/jsonLongStrings.ts
 * textWithoutLongStrings): a large upload's base64 decoded and parsed again held the event loop
 * for seconds. Measured in this thread's CPU time, which a loaded machine does not stretch the
 * way it stretches wall time: a 50 MB body refused for its number costs at most a few ms more than
 * the same body with an exact number (0-8 ms here; 64-96 ms with the whole body parsed again).
 */
import { describe, expect, it } from "vitest"
import { checkParsedBody } from "../../src/http/input/jsonInput.js"

/** An ingest body with one base64 string of `mb` MB and the number `n` beside it. */
const bodyWith = (n: string, mb: number) => {
  const head = Buffer.from(`{"source":"s","fileName":"a.bin","fileRef":{"provider":"inline_base64","n":${n},"data":"`)
  const tail = Buffer.from(`"}}`)
  const body = Buffer.alloc(head.length + mb * 1024 * 1024 + tail.length, 0x41)
  head.copy(body, 0)
  tail.copy(body, body.length - tail.length)
  return body
}

/** This thread's CPU time for `f`, in ms (4 ms ticks here), and what it returned. */
const threadCpu = <A>(f: () => A): { readonly ms: number; readonly value: A } => {
  const before = process.threadCpuUsage()
  const value = f()
  const spent = process.threadCpuUsage(before)
  return { ms: (spent.user + spent.system) / 1000, value }
}

describe("the second parse of a body with an inexact number", () => {
  it("leaves its long strings out: a 50 MB body costs a few ms more than one with an exact number, not its parse again", () => {
    const exact = bodyWith("9007199254740992", 50)
    const inexact = bodyWith("9007199254740993", 50)
    // The value's own checks are not what is measured: an empty object stands for the parsed body.
    const check = (bytes: Buffer) => checkParsedBody(bytes, { ok: true, value: {} }, 64)
    const extras: Array<number> = []
    for (let round = 0; round < 3; round++) {
      const a = threadCpu(() => check(exact))
      const b = threadCpu(() => check(inexact))
      expect(a.value.ok).toBe(true)
      expect(b.value.ok).toBe(false)
      if (b.value.ok === false) expect(b.value.error.message).toMatch(/^fileRef\.n: the number 9007199254740993 cannot be stored exactly/)
      extras.push(b.ms - a.ms)
    }
    // The least of three: a collection in one round is not the second parse.
    expect(Math.min(...extras), `extra CPU per round: ${extras.map((x) => x.toFixed(1)).join(", ")} ms`).toBeLessThan(30)
  })
})
