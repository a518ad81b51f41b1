import * as Effect from "effect/Effect"

/** A start-up failure (bad settings or fixture, port in use): the reason logged, exit code 1, no stack. */
export const failStart = (error: unknown) =>
  Effect.logError(
    `Cannot start: ${error !== null && typeof error === "object" && "message" in error ? String(error.message) : String(error)}`
  ).pipe(Effect.zipRight(Effect.sync(() => {
    process.exitCode = 1
  })))
