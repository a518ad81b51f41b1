/**
 * One overall deadline per request (SVC_REQUEST_DEADLINE_MS). The gateway's middleware sets it
 * once the request has been received in full (src/gateway/requestScope.ts); every upstream call
 * made while serving the request reads it, so per-call timeouts, retries and backoff all fit
 * inside it (src/workspace/http/client.ts). Fibers forked by a handler inherit it.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

export interface Deadline {
  /** When the request's time is up (epoch milliseconds). */
  readonly at: number
  /** The budget it was set with, for messages. */
  readonly budgetMs: number
}

/** The deadline of the request the current fiber serves; None outside one (`yield* currentDeadline`). */
export const currentDeadline: Context.Reference<Option.Option<Deadline>> = Context.Reference<Option.Option<Deadline>>(
  "services/currentDeadline",
  { defaultValue: () => Option.none<Deadline>() }
)

/** Runs `self` with a deadline `budgetMs` from now (an enclosing, earlier deadline is kept). */
export const withDeadline = (budgetMs: number) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(currentDeadline, (outer) => withDeadlineNow(outer, budgetMs, self))

/** `withDeadline` given the enclosing deadline already read (`outer`): the gateway's middleware, per request. */
export const withDeadlineNow = <A, E, R>(
  outer: Option.Option<Deadline>,
  budgetMs: number,
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => {
  const at = Date.now() + budgetMs
  if (Option.isSome(outer) && outer.value.at <= at) return self
  const deadline = Option.some({ at, budgetMs })
  // updateContext, not provideService: the same context change without a `dual` wrapper per call.
  return Effect.updateContext(self, (context: Context.Context<R>) => Context.add(context, currentDeadline, deadline))
}
