/**
 * Every check that runs a pattern over client or remote input finishes quickly on
 * adversarial strings (long repetitions of separators and whitespace). Bounds are generous (a
 * linear check takes microseconds; the exponential one it replaced took seconds at 60 bytes).
 * The media-type scanner also accepts exactly the language of the RFC 9110 pattern it replaced.
 */
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import { FileName, fileNameProblem, isMediaType, MEDIA_TYPE_DOC_PATTERN, MediaType } from "../../src/api/headerValues.js"
import { idempotencyKeyProblem } from "../../src/api/idempotency.js"
import { TaskId } from "../../src/api/ids.js"
import { oneLine } from "../../src/cli/common.js"
import {
  contentTypeOf,
  describeRequestError,
  fileNameFromContentDisposition,
  fileNameFromUrl
} from "../../src/files/providers/url.js"
import { malformedPercentEncoding } from "../../src/http/errors/percentEncoding.js"
import { PATTERN_BUDGET_MS, testWithin } from "../../src/lib/boundedRegExp.js"
import { isValidRequestId, parseTraceparent } from "../../src/observability/requestContext.js"
import { checkContext } from "../../src/services/startParams.js"
import * as fc from "../fixtures/arbitrary.js"

/** Generous: a linear check of a few KB takes well under a millisecond. */
const BOUND_MS = 200

const FRAGMENTS = [
  ";", " ", "\t", ";  ", "; ", " ;", "a", "=", "\"", "\\", "\\\"", "/", ":", "%", "%2", "\n", "\r\n", "(", ")", ",",
  "'", "x=y", "a/b", "-", ".", "filename=", "filename*=", "UTF-8''", "*", "é", "\u202e", "(family:4, host:",
  ") is not allowed", "0", "f"
]
const PREFIXES = ["", "a/b", "text/plain", "a/b;", "DNS lookup ", "attachment; ", "0123abcd-0123-0123-0123-0123456789ab", "00-"]

/** A prefix, a short unit of fragments repeated up to 400 times, and a fragment to end on. */
const adversarial = fc.tuple(
  fc.constantFrom(...PREFIXES),
  fc.array(fc.constantFrom(...FRAGMENTS), { minLength: 1, maxLength: 4 }).pipe(fc.map((u) => u.join(""))),
  fc.integer({ min: 1, max: 400 }),
  fc.constantFrom(...FRAGMENTS, "")
).pipe(fc.map(([p, unit, n, end]) => p + unit.repeat(n) + end))

/** Wall-clock time: for the budget, which is itself wall-clock. */
const timed = (f: () => unknown): number => {
  const t = performance.now()
  f()
  return performance.now() - t
}

/**
 * CPU time of the call: what a linear check is about is the work it does, and on a loaded
 * machine wall-clock time also counts the time this process waited for a core (a clean-clone
 * run with both cores busy took 244 ms for a check that needs a few).
 */
const cpuTimed = (f: () => unknown): number => {
  const before = process.cpuUsage()
  f()
  const used = process.cpuUsage(before)
  return (used.user + used.system) / 1000
}

const docPattern = new RegExp(MEDIA_TYPE_DOC_PATTERN)
const decodeMediaType = Schema.decodeUnknownResult(MediaType)
const decodeFileName = Schema.decodeUnknownResult(FileName)
const decodeTaskId = Schema.decodeUnknownResult(TaskId)

const CHECKS: ReadonlyArray<readonly [string, (s: string) => unknown]> = [
  ["isMediaType", isMediaType],
  ["isMediaType on the whole string (past the length cap)", (s) => isMediaType(s.slice(0, 255))],
  ["the documented media-type pattern", (s) => docPattern.test(s)],
  ["MediaType schema", decodeMediaType],
  ["FileName schema", decodeFileName],
  ["fileNameProblem", fileNameProblem],
  ["TaskId schema", decodeTaskId],
  ["remote Content-Type", contentTypeOf],
  ["remote Content-Disposition", fileNameFromContentDisposition],
  ["file name from a URL", (s) => fileNameFromUrl(new URL(`http://h/${encodeURIComponent(s)}`))],
  ["refused-address message (holds the caller's host)", (s) => describeRequestError(new Error(s), new URL("http://h/"))],
  ["request id", isValidRequestId],
  ["traceparent", parseTraceparent],
  ["Idempotency-Key", idempotencyKeyProblem],
  ["percent-encoding check of a path", malformedPercentEncoding],
  ["CLI table cell", oneLine]
]

describe("every pattern that sees input is linear", () => {
  it.each(CHECKS)("%s finishes quickly on repeated separators and whitespace", (_name, check) => {
    fc.assertProperty(adversarial, (s) => {
      const ms = cpuTimed(() => check(s))
      expect(ms, JSON.stringify(s.slice(0, 80))).toBeLessThan(BOUND_MS)
    }, { numRuns: 300 })
  })

  it("the issue's 59-byte content type and far longer ones are refused at once", () => {
    for (const reps of [18, 60, 2000]) {
      const evil = `a/b${";  ".repeat(reps)};x`
      expect(cpuTimed(() => expect(isMediaType(evil)).toBe(false))).toBeLessThan(BOUND_MS)
      expect(cpuTimed(() => expect(docPattern.test(evil)).toBe(false))).toBeLessThan(BOUND_MS)
      expect(cpuTimed(() => expect(Result.isFailure(decodeMediaType(evil))).toBe(true))).toBeLessThan(BOUND_MS)
    }
  })
})

/** The RFC 9110 media-type pattern the scanner replaced (exponential on `;` and whitespace runs). */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
const QUOTED = "\"(?:[\\t \\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\[\\t\\x20-\\x7e])*\""
const ORIGINAL = new RegExp(`^${TOKEN}/${TOKEN}(?:[ \\t]*;[ \\t]*(?:${TOKEN}=(?:${TOKEN}|${QUOTED}))?)*$`)

const MEDIA_PARTS = ["a", "b", "/", ";", " ", "\t", "=", "\"", "\\", "x", "y", "é", "\u0001", "-", ",", "(", "{"]

describe("the media-type scanner accepts the RFC 9110 language", () => {
  it("agrees with the pattern it replaced on short strings (where that one is still quick)", () => {
    fc.assertProperty(
      fc.tuple(
        fc.constantFrom("", "a/b", "text/plain", "a/b;"),
        fc.array(fc.constantFrom(...MEDIA_PARTS), { maxLength: 16 })
      ).pipe(fc.map(([p, parts]) => p + parts.join(""))),
      (s) => {
        expect(isMediaType(s), JSON.stringify(s)).toBe(ORIGINAL.test(s))
        expect(docPattern.test(s), JSON.stringify(s)).toBe(ORIGINAL.test(s))
      },
      { numRuns: 5_000 }
    )
  })

  it("agrees with the documented pattern on long strings, and admits what its arbitrary makes", () => {
    fc.assertProperty(adversarial, (s) => {
      expect(isMediaType(s), JSON.stringify(s)).toBe(s.length <= 255 && docPattern.test(s))
    }, {
      numRuns: 1_000
    })
    for (const s of fc.sample(Arbitrary.schema(MediaType), 200)) expect(isMediaType(s), s).toBe(true)
  })
})

describe("a runbook's start-parameter pattern runs with a time budget on the server", () => {
  // RE2 cannot express the lookahead, so this one runs on V8 under the budget.
  const param = { key: "code", type: "string" as const, pattern: "^(?=(a+)+$)a", required: true }

  it("a catastrophic pattern is stopped near the budget and answered with a 400 naming the key", async () => {
    const evil = `${"a".repeat(40)}!`
    let outcome: boolean | "timeout" = false
    const ms = timed(() => (outcome = testWithin(new RegExp(param.pattern, "u"), evil)))
    expect(outcome).toBe("timeout")
    expect(ms).toBeLessThan(PATTERN_BUDGET_MS * 5 + 500)
    const refused = await Effect.runPromise(Effect.flip(checkContext([param], { code: evil }, testWithin)))
    expect(refused.message).toMatch(/^context\.code: could not be checked against the workflow's pattern/)
  })

  it("a nested quantifier RE2 can express is decided in linear time, not cut off", async () => {
    const nested = { ...param, pattern: "^(a+)+$" }
    const evil = `${"a".repeat(100_000)}!`
    // The linear engine is loaded and the pattern compiled on first use: not what is timed here.
    expect(testWithin(new RegExp(nested.pattern, "u"), "aa!")).toBe(false)
    let outcome: boolean | "timeout" = true
    const ms = cpuTimed(() => (outcome = testWithin(new RegExp(nested.pattern, "u"), evil)))
    expect(outcome).toBe(false)
    expect(ms).toBeLessThan(BOUND_MS)
    const refused = await Effect.runPromise(Effect.flip(checkContext([nested], { code: evil }, testWithin)))
    expect(refused.message).toBe("context.code: must match the pattern ^(a+)+$")
  })

  it("an ordinary pattern still decides as before", async () => {
    const period = { key: "period", type: "string" as const, pattern: "^\\d{4}-(0[1-9]|1[0-2])$", required: true }
    await Effect.runPromise(checkContext([period], { period: "2026-11" }, testWithin))
    const bad = await Effect.runPromise(Effect.flip(checkContext([period], { period: "2026-13" }, testWithin)))
    expect(bad.message).toBe("context.period: must match the pattern ^\\d{4}-(0[1-9]|1[0-2])$")
    expect(testWithin(/^a+$/u, "a".repeat(100_000))).toBe(true)
  })
})
