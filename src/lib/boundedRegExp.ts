/**
 * Runs a regular expression that the gateway did not write (a runbook's start-parameter
 * `pattern`, applied to a client's value) without letting it hold the event loop. JavaScript's
 * engine backtracks, so a pattern such as `^(a+)+$` takes exponential time on some inputs.
 *
 * - A pattern RE2 can express (nearly every one a runbook uses) runs on re2js, a linear-time
 *   engine: no budget, so it never depends on how busy the machine is. A wall-clock budget did:
 *   on a loaded machine an ordinary `^\d{4}-(0[1-9]|1[0-2])$` was refused "in time".
 * - The rest (backreferences, lookaround) run on V8 with a vm timeout, which interrupts a
 *   match that runs past the budget.
 *
 * Node only (the console checks its own user's input in the browser, where only that user waits).
 */
import { createRequire } from "node:module"
import * as vm from "node:vm"
import type { RE2JS } from "re2js"

// re2js (180 KB of code) is loaded by the first foreign pattern, not at start: most cells never
// see one (bench/RESULTS.md, memory per cell). A call at run time in the bundle too.
const requireLazily = createRequire(import.meta.url)
let engine: typeof RE2JS | undefined
const re2 = (): typeof RE2JS => (engine ??= (requireLazily("re2js") as typeof import("re2js")).RE2JS)

/** What one run of a foreign pattern on V8 may cost the event loop. */
export const PATTERN_BUDGET_MS = 25

/** Which engine decides a pattern: what `testWithin` would use (for tests and logs). */
export const engineFor = (re: RegExp): "linear" | "budgeted" => (linear(re) === undefined ? "budgeted" : "linear")

/** `re.test(s)`; "timeout" only when a pattern RE2 cannot express ran past its budget on V8. */
export const testWithin = (re: RegExp, s: string, budgetMs = PATTERN_BUDGET_MS): boolean | "timeout" => {
  const compiled = linear(re)
  if (compiled !== undefined) return compiled.matcher(s).find()
  for (let attempt = 0; ; attempt++) {
    const before = process.cpuUsage()
    const result = runOnce(re, s, budgetMs)
    if (result !== "timeout" || attempt >= DESCHEDULED_RETRIES) return result
    // Wall-clock time: a run descheduled past the budget used little CPU and is tried again;
    // one that backtracked used it.
    const used = process.cpuUsage(before)
    if ((used.user + used.system) / 1000 >= budgetMs / 2) return "timeout"
  }
}

/** How many times a V8 run descheduled past its budget is tried again before it counts. */
const DESCHEDULED_RETRIES = 4

/** Compiled patterns by flags and source (runbooks hold a few; the cap only bounds a hostile fixture). */
const cache = new Map<string, RE2JS | null>()
const CACHE_MAX = 512

/** The re2js form of `re`, or undefined when RE2 cannot express it with JavaScript's meaning. */
const linear = (re: RegExp): RE2JS | undefined => {
  const key = `${re.flags}/${re.source}`
  let compiled = cache.get(key)
  if (compiled === undefined) {
    compiled = compile(re)
    if (cache.size >= CACHE_MAX) cache.clear()
    cache.set(key, compiled)
  }
  return compiled ?? undefined
}

const compile = (re: RegExp): RE2JS | null => {
  const RE2JS = re2()
  let flags = 0
  for (const f of re.flags) {
    if (f === "i") flags |= RE2JS.CASE_INSENSITIVE
    else if (f === "m") flags |= RE2JS.MULTILINE
    else if (f === "s") flags |= RE2JS.DOTALL
    else if (f !== "u") return null // g/y keep state between calls; d/v: leave them to V8
  }
  if (re.flags.includes("i") && /\\[wWbB]/.test(re.source)) return null // V8's \w with i and u also takes ſ and K
  const source = withJsSpaces(re.source)
  if (source === undefined) return null
  try {
    return RE2JS.compile(source, flags)
  } catch {
    return null // backreferences, lookaround, or syntax RE2 reads differently
  }
}

/** JavaScript's \s (RE2's is ASCII only). */
const JS_SPACE = "\\t\\n\\v\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}"

/**
 * `source` with \s and \S spelled out as JavaScript means them, or undefined for a \S inside a
 * class (a class cannot subtract; V8 decides that pattern).
 */
const withJsSpaces = (source: string): string | undefined => {
  let out = ""
  let inClass = false
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!
    if (c === "\\" && i + 1 < source.length) {
      const next = source[++i]!
      if (next === "s") out += inClass ? JS_SPACE : `[${JS_SPACE}]`
      else if (next === "S") {
        if (inClass) return undefined
        out += `[^${JS_SPACE}]`
      } else out += c + next
      continue
    }
    if (c === "[" && !inClass) inClass = true
    else if (c === "]" && inClass) inClass = false
    out += c
  }
  return out
}

const context = vm.createContext(Object.create(null) as object)
const script = new vm.Script("re.test(s)")

const runOnce = (re: RegExp, s: string, budgetMs: number): boolean | "timeout" => {
  const scope = context as { re?: RegExp | undefined; s?: string | undefined }
  scope.re = re
  scope.s = s
  try {
    return script.runInContext(context, { timeout: budgetMs }) === true
  } catch (e) {
    if ((e as { code?: unknown } | null)?.code === "ERR_SCRIPT_EXECUTION_TIMEOUT") return "timeout"
    throw e
  } finally {
    scope.re = undefined
    scope.s = undefined
  }
}
