/**
 * A foreign pattern's budget is wall-clock time, so a process descheduled during a trivial match
 * (a loaded machine; here SIGSTOP/SIGCONT) must not count that as the pattern's fault: seen in a
 * full test run, where creating a task with `^\d{4}-(0[1-9]|1[0-2])$` was refused "in time".
 * A pattern that really backtracks must still be cut off.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { engineFor, PATTERN_BUDGET_MS, testWithin } from "../../src/lib/boundedRegExp.js"
import { NODE } from "../support/process.js"

/** A small budget, so that the stops land inside runs often (a trivial match takes microseconds). */
const BUDGET_MS = 2

const root = fileURLToPath(new URL("../..", import.meta.url))

/** A child that checks an ordinary pattern in a loop for `ms` and prints how many runs timed out. */
const CHILD = `
import { testWithin } from "./src/lib/boundedRegExp.ts"
const re = new RegExp("^\\\\d{4}-(0[1-9]|1[0-2])$", "u")
const end = Date.now() + Number(process.argv[1])
let runs = 0, timeouts = 0
process.stdout.write("ready\\n")
while (Date.now() < end) { runs++; const r = testWithin(re, "2026-11", Number(process.argv[2])); if (r === "timeout") timeouts++; else if (r !== true) throw new Error("wrong") }
process.stdout.write(JSON.stringify({ runs, timeouts }) + "\\n")
`

describe("testWithin on a descheduled process", () => {
  it("an ordinary match stopped past its budget is run again, not refused", async () => {
    const child = spawn(NODE, ["--import", "tsx", "--input-type=module", "-e", CHILD, "3000", String(BUDGET_MS)], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.on("data", (b: Buffer) => (out += b.toString()))
    await new Promise<void>((resolve) => {
      const check = () => (out.includes("ready") ? resolve() : setTimeout(check, 10))
      check()
    })
    // Stop the child for 5x the budget, again and again, while it matches.
    const pid = child.pid!
    const until = Date.now() + 2_000
    while (Date.now() < until && child.exitCode === null) {
      process.kill(pid, "SIGSTOP")
      await new Promise((r) => setTimeout(r, BUDGET_MS * 4))
      process.kill(pid, "SIGCONT")
      await new Promise((r) => setImmediate(r))
    }
    const code = await new Promise<number | null>((resolve) =>
      child.exitCode !== null ? resolve(child.exitCode) : child.on("exit", (c) => resolve(c))
    )
    expect(code).toBe(0)
    const result = JSON.parse(out.trim().split("\n").at(-1)!) as { runs: number; timeouts: number }
    expect(result.runs).toBeGreaterThan(100)
    expect(result.timeouts).toBe(0)
  }, 30_000)

  it("a pattern that backtracks and that RE2 cannot express is still cut off", () => {
    const re = /^(?=(a+)+$)a/u
    expect(engineFor(re)).toBe("budgeted")
    const started = performance.now()
    expect(testWithin(re, "a".repeat(40) + "!")).toBe("timeout")
    expect(performance.now() - started).toBeLessThan(PATTERN_BUDGET_MS * 5 + 500)
  })
})

/** Patterns built from the pieces runbooks use, including the ones whose meaning differs between the engines. */
const atom = fc.constantFrom("a", "b", "1", "-", " ", "\\d", "\\D", "\\w", "\\W", "\\s", "\\S", ".", "[a-c]", "[^a1]", "[\\s1]",
  "[^\\s]", "\\u00a0", "\\.", "é", "\\p{L}", "\\b")
const quantified = fc.tuple(atom, fc.constantFrom("", "", "*", "+", "?", "{2}", "{1,3}", "+?")).map(([a, q]) => a === "\\b" ? a : a + q)
const sequence = fc.array(quantified, { minLength: 1, maxLength: 5 }).map((xs) => xs.join(""))
const pattern = fc.tuple(fc.boolean(), fc.array(sequence, { minLength: 1, maxLength: 3 }), fc.boolean(), fc.constantFrom("u", "iu", "mu", "su"))
  .map(([start, alts, end, flags]) => ({ source: `${start ? "^" : ""}(?:${alts.join("|")})${end ? "$" : ""}`, flags }))
const subject = fc.array(fc.constantFrom("a", "b", "c", "1", "-", " ", "\u00a0", "\u2003", "\n", "é", "É", "ſ", "K", "😀", "."), { maxLength: 8 })
  .map((xs) => xs.join(""))

describe("the linear engine means what JavaScript means", () => {
  it("testWithin agrees with RegExp.test on generated patterns and values", () => {
    let linear = 0
    fc.assert(fc.property(pattern, subject, ({ flags, source }, s) => {
      const re = new RegExp(source, flags)
      if (engineFor(re) === "linear") linear++
      // What it means, not how fast: a budget a collection of this worker's heap cannot pass (a
      // full run once saw a one-character value "timeout" under the 25 ms one, CPU spent).
      expect(testWithin(re, s, 2_000), `/${source}/${flags} on ${JSON.stringify(s)}`).toBe(re.test(s))
    }), { numRuns: 3_000 })
    expect(linear).toBeGreaterThan(1_000)
  })

  it("the patterns runbooks use run on the linear engine", () => {
    for (const source of ["^\\d{4}-(0[1-9]|1[0-2])$", "^[A-Z]{3}$", "^\\S+@\\S+$", "^\\d+(\\.\\d{1,2})?$", "^(a+)+$"]) {
      expect(engineFor(new RegExp(source, "u")), source).toBe("linear")
    }
  })
})
