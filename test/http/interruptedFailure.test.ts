/**
 * A request interrupted (its client gone, or the drain's cut) while something else failed: the
 * cause holds both, and it was answered as an unhandled failure (logged at level error with its
 * stack, a 500 to nobody). It stays an interruption, as one without a failure always was.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import { shapeErrors } from "../../src/http/errors/errorResponse.js"

const run = (cause: Cause.Cause<unknown>) =>
  Effect.runPromiseExit(shapeErrors(Effect.failCause(cause) as Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>))

describe("shapeErrors and interruption", () => {
  it("a failure beside an interruption stays an interruption, not a 500", async () => {
    const exit = await run(Cause.combine(Cause.fail(new Error("PgConnection: Query failed")), Cause.interrupt()))
    expect(Exit.isFailure(exit) && Cause.hasInterrupts(exit.cause)).toBe(true)
  })

  it("an interruption alone stays one; a failure alone is answered", async () => {
    const interrupted = await run(Cause.interrupt())
    expect(Exit.isFailure(interrupted) && Cause.hasInterruptsOnly(interrupted.cause)).toBe(true)
    const failed = await run(Cause.fail(new Error("boom")))
    expect(Exit.isSuccess(failed) && failed.value.status).toBe(500)
  })
})
