/**
 * The decision link's token and duration rules (src/domain/links.ts), in process: what a token
 * binds, which spellings parse, how rotation verifies, which durations are taken.
 */
import { randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import { MAX_LINK_TTL_MS, parseLinkTtl, parseToken, signLink, verifyLink } from "../../src/domain/links.js"

const binding = {
  pairId: randomBytes(16).toString("base64url"),
  tenantId: "t",
  taskId: "task",
  stepId: "step",
  decision: "approve" as const,
  actor: "ann@acme.example",
  expiresAt: "2026-12-08T00:00:00.000Z"
}

describe("link tokens", () => {
  it("verify for exactly what they were signed for, with any key still held", () => {
    const [k1, k2] = [randomBytes(32), randomBytes(32)]
    const token = signLink(k1, binding)
    const parsed = parseToken(token)!
    expect(verifyLink([k1], parsed, binding)).toBe(true)
    expect(verifyLink([k2, k1], parsed, binding)).toBe(true)
    expect(verifyLink([k2], parsed, binding)).toBe(false)
    expect(verifyLink([], parsed, binding)).toBe(false)
    for (const [field, value] of Object.entries({ tenantId: "u", taskId: "task2", stepId: "step2", actor: "Ann@acme.example", expiresAt: "2026-12-09T00:00:00.000Z" })) {
      expect(verifyLink([k1], parsed, { ...binding, [field]: value }), field).toBe(false)
    }
    expect(verifyLink([k1], parsed, { ...binding, decision: "reject" })).toBe(false)
    // Fields cannot run into each other: moving a character between two fields changes the text signed.
    expect(verifyLink([k1], parsed, { ...binding, taskId: "tas", stepId: "kstep" })).toBe(false)
  })

  it("parse only in their one canonical spelling", () => {
    const token = signLink(randomBytes(32), binding)
    expect(parseToken(token)).toBeDefined()
    const last = token.at(-1)!
    const sibling = String.fromCharCode(last.charCodeAt(0) + 1) // same bytes, unused bits set
    for (const bad of [token.slice(0, -1) + sibling, `${token}=`, token.toUpperCase(), token.replace(".a.", ".A."), token.replace(".a.", "."), ` ${token}`, `${token}\n`, token.replace(/[-_]/g, "+")]) {
      if (bad === token) continue
      expect(parseToken(bad), bad).toBeUndefined()
    }
  })
})

describe("--expires-in", () => {
  it("takes ISO 8601 durations of fixed length, one second to 30 days", () => {
    expect(parseLinkTtl("PT72H")).toEqual({ ms: 72 * 3600_000 })
    expect(parseLinkTtl("P3D")).toEqual({ ms: 3 * 86_400_000 })
    expect(parseLinkTtl("P1DT12H30M15S")).toEqual({ ms: ((36 * 60 + 30) * 60 + 15) * 1000 })
    expect(parseLinkTtl("P1W")).toEqual({ ms: 7 * 86_400_000 })
    expect(parseLinkTtl("PT1S")).toEqual({ ms: 1000 })
    expect(parseLinkTtl("P30D")).toEqual({ ms: MAX_LINK_TTL_MS })
    expect(parseLinkTtl("PT720H")).toEqual({ ms: MAX_LINK_TTL_MS })
    for (const [text, why] of [
      ["P30DT1S", /longer than 30 days/],
      ["PT0S", /at least one second/],
      ["P1M", /no fixed length/],
      ["P1Y2D", /no fixed length/],
      ["PT1M", /^\S+$/], // minutes are fine...
      ["72h", /not an ISO 8601 duration/],
      ["P", /not an ISO 8601 duration/],
      ["PT", /not an ISO 8601 duration/],
      ["p3d", /not an ISO 8601 duration/],
      ["P3D ", /not an ISO 8601 duration/],
      ["PT1.5H", /not an ISO 8601 duration/],
      ["P３D", /not an ISO 8601 duration/],
      ["P99999999999D", /not an ISO 8601 duration/]
    ] as const) {
      const parsed = parseLinkTtl(text)
      if (text === "PT1M") expect(parsed).toEqual({ ms: 60_000 })
      else expect("problem" in parsed && parsed.problem, text).toMatch(why)
    }
  })
})
