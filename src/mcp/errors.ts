/**
 * The one error the tool server adds to the gateway's set: an agent may not complete a step
 * assigned to another agent. Same fields as every other error (`statusCode`, `error`, `message`).
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  statusCode: Schema.Literal(403).pipe(Schema.withConstructorDefault(Effect.succeed(403 as const))),
  error: Schema.Literal("Forbidden").pipe(Schema.withConstructorDefault(Effect.succeed("Forbidden" as const))),
  message: Schema.String
}) {}
