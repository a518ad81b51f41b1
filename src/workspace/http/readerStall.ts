import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/**
 * `stream`, running `onStall` once when its reader has taken nothing for `stallMs`: a chunk was
 * handed on and no next one has been asked for since. Time spent waiting for the source is not
 * counted (a source that stalls is the source's timeout's business).
 *
 * A download's reader that stops (or takes a byte a second) leaves the server waiting for its
 * socket to drain, and the stream is not pulled again: nothing inside the stream notices, so a
 * watch beside it does. Its work is done while the stream runs, in the stream's own scope.
 */
export const onReaderStall = <A, E, R>(
  stream: Stream.Stream<A, E, R>,
  stallMs: number,
  onStall: Effect.Effect<void>
): Stream.Stream<A, E, R> =>
  Stream.transformPull(stream, (pull, scope) =>
    Effect.gen(function*() {
      /** When the last chunk was handed on; undefined while the reader waits for the next. */
      let handedAt: number | undefined
      const every = Math.max(10, Math.min(1000, Math.floor(stallMs / 4)))
      yield* Effect.forkIn(
        Effect.gen(function*() {
          for (;;) {
            yield* Effect.sleep(every)
            if (handedAt !== undefined && Date.now() - handedAt >= stallMs) return yield* onStall
          }
        }),
        scope
      )
      return Effect.suspend(() => {
        handedAt = undefined
        return pull
      }).pipe(Effect.tap(() =>
        Effect.sync(() => {
          handedAt = Date.now()
        })
      ))
    }))
