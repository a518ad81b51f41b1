/**
 * Waits on a state, never on time alone: polls `check` until it gives a value other than
 * `undefined` or `false`, and returns that value. Past the timeout it throws an error that names
 * the wait (its description, or the check's own source text), how long it waited, how many times
 * it looked and what it saw last: in a full run vitest adds the file and the test, so a failure
 * says which wait ran out, not only that a test took too long.
 */
export interface WaitOptions {
  /** How long to keep looking (default 10 s). */
  readonly timeoutMs?: number
  /** The pause between looks (default 25 ms). */
  readonly everyMs?: number
  /** What to add to the error when the wait runs out (a log tail, the last answer). */
  readonly seen?: () => string
}

type Check<A> = () => A | undefined | false | Promise<A | undefined | false>

/** A wait's name: its description, else the check's source (`() => walSize(file) === 0`). */
const nameOf = (what: string | Check<unknown>): string =>
  typeof what === "string" ? what : what.toString().replace(/\s+/g, " ").slice(0, 200)

export class WaitTimedOut extends Error {
  override readonly name = "WaitTimedOut"
}

export const waitFor = async <A>(what: string | Check<A>, check: Check<A>, options: WaitOptions = {}): Promise<A> => {
  const timeoutMs = options.timeoutMs ?? 10_000
  const everyMs = options.everyMs ?? 25
  const started = Date.now()
  let looks = 0
  let last: unknown
  for (;;) {
    looks++
    last = await check()
    if (last !== undefined && last !== false) return last as A
    if (Date.now() - started >= timeoutMs) {
      const seen = options.seen?.()
      throw new WaitTimedOut(
        `waited ${timeoutMs} ms (${looks} looks) for: ${nameOf(what)}; last value: ${String(last)}` +
          (seen === undefined || seen === "" ? "" : `\n${seen}`)
      )
    }
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

/** `waitFor` named by the check itself: `await until(() => walSize(file) === 0)`. */
export const until = <A>(check: Check<A>, options: WaitOptions = {}): Promise<A> => waitFor(check, check, options)
