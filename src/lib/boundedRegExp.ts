/**
 * Runs a regular expression that the gateway did not write (a runbook's start-parameter
 * `pattern`, applied to a client's value) with a time budget. JavaScript's engine backtracks, so
 * a pattern such as `^(a+)+$` takes exponential time on some inputs; V8 interrupts a match that
 * runs past a vm timeout, so the event loop is blocked for at most the budget. Node only (the
 * console checks its own user's input in the browser, where only that user waits).
 */
import * as vm from "node:vm"

/** What one run of a foreign pattern may cost the event loop. */
export const PATTERN_BUDGET_MS = 25

const context = vm.createContext(Object.create(null) as object)
const script = new vm.Script("re.test(s)")

/**
 * `re.test(s)`, or "timeout" when it did not finish within `budgetMs`, twice. The budget is
 * wall-clock time (vm's watchdog thread): on a loaded machine a trivial match can be
 * descheduled past it, so a timeout is tried once more before it counts; a pattern that
 * really backtracks runs past it both times (the event loop is then held for 2 x budget).
 */
export const testWithin = (re: RegExp, s: string, budgetMs = PATTERN_BUDGET_MS): boolean | "timeout" => {
  const first = runOnce(re, s, budgetMs)
  return first === "timeout" ? runOnce(re, s, budgetMs) : first
}

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
