/**
 * A subscription's receiver URL as it is stored and sent (src/workspace/embedded/webhooks.ts
 * `checkReceiverUrl`): the 2,048-character bound holds for the normalized URL, not only for the
 * text sent (1,000 emoji in a path were stored as 12,018 characters), and port 0, which nothing
 * can be connected to, is refused at once instead of failing every delivery.
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { checkReceiverUrl } from "../../src/workspace/embedded/webhooks.js"

const check = (url: string) =>
  Effect.runPromise(Effect.match(checkReceiverUrl(url), { onFailure: (e) => ({ error: e.message }), onSuccess: (stored) => ({ stored }) }))

describe("a receiver URL", () => {
  it("is bounded once normalized, in any script", async () => {
    for (const path of ["😀".repeat(1_000), "承認".repeat(300), "é".repeat(400)]) {
      expect(await check(`https://hooks.example.com/${path}`), path.slice(0, 4)).toEqual({
        error: expect.stringMatching(/^url: \d+ characters once normalized .*at most 2048$/)
      })
    }
    const ascii = `https://hooks.example.com/${"a".repeat(2_048 - 26)}`
    expect(ascii.length).toBe(2_048)
    expect(await check(ascii)).toEqual({ stored: ascii })
    expect(await check(`${ascii}b`)).toEqual({ error: expect.stringMatching(/^url: 2049 characters/) })
  })

  it("with port 0 is refused; other ports are kept", async () => {
    expect(await check("https://hooks.example.com:0/in")).toEqual({ error: "url: port 0 cannot be connected to" })
    // An empty fragment as any other (it read as no hash, and was stored with its `#`).
    expect(await check("https://hooks.example.com/in#")).toEqual({ error: "url: a fragment (#...) is never sent; leave it out" })
    expect(await check("https://hooks.example.com:8443/in")).toEqual({ stored: "https://hooks.example.com:8443/in" })
  })
})
