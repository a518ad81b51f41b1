/**
 * Letting the event loop run. Effect resumes fibers on microtasks, so a chain of synchronous
 * steps (parsing a large body, decoding it, statements of the synchronous SQLite driver) runs
 * without a break for I/O: a health check that arrives meanwhile waits for the whole chain.
 * Long paths call `yieldToEventLoop` between their parts.
 */
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"

/** Resumes on a macrotask (setImmediate): pending I/O (other requests) is served first. */
export const yieldToEventLoop: Effect.Effect<void> = Effect.callback<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/** Inputs at least this large (bytes or characters) take a turn of the event loop between their steps. */
export const LARGE_INPUT = 256 * 1024

/** A turn of the event loop before working on an input of `size`, when it is large. */
export const yieldBeforeLarge = (size: number): Effect.Effect<void> => size >= LARGE_INPUT ? yieldToEventLoop : Effect.void

/** Short synchronous steps run back to back for up to this long before the event loop gets a turn. */
export const SLICE_MS = 5

/**
 * For a loop of short synchronous steps: a turn of the event loop once the steps since the slice
 * began (or since its last turn) have run for `ms`. A turn after every step costs more than it
 * buys when a step is short: the three turns between a 1 MiB upload's four chunk inserts (about
 * 1 ms each) cost about 1 ms of CPU per upload (bench/PROFILE.md, S3). Make one per loop.
 */
export const timeSlice = (ms = SLICE_MS): Effect.Effect<void> => {
  let since = performance.now()
  return Effect.suspend(() =>
    performance.now() - since < ms
      ? Effect.void
      : Effect.map(yieldToEventLoop, () => {
        since = performance.now()
      })
  )
}

/**
 * One large input is parsed or decoded at a time, process-wide. Node runs every pending
 * setImmediate callback in one pass of the loop, so the turns above separate one input's steps
 * from requests but not from the steps of other large inputs: three 40 MiB uploads parsing at
 * once made a pass of 3 x 70-100 ms under load (bench S8). In turn, a pass holds at most one
 * such step, and an input's transient copies (text, parsed value, decoded bytes) are made one
 * input at a time. Inputs below LARGE_INPUT never wait.
 */
const largeInputs = Semaphore.makeUnsafe(1)

/**
 * `effect`, run holding the large-input permit when `size` is at least LARGE_INPUT. A waiter is
 * resumed by the release itself (microtasks, in the same pass): it takes a turn first.
 */
export const oneLargeAtATime = <A, E, R>(size: number, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  size >= LARGE_INPUT ? largeInputs.withPermits(1)(Effect.andThen(yieldToEventLoop, effect)) : effect
