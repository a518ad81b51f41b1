/**
 * The one error the workspace API adds to the gateway's set: 501, for the registry and webhook
 * operations when the server runs without the embedded store behind them. Same body shape as
 * every other error: `{statusCode, message, error}`.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"

export class NotImplemented extends Schema.TaggedError<NotImplemented>()("NotImplemented", {
  statusCode: Schema.Literal(501).pipe(Schema.withConstructorDefault(Effect.succeed(501 as const))),
  error: Schema.Literal("Not Implemented").pipe(Schema.withConstructorDefault(Effect.succeed("Not Implemented" as const))),
  message: Schema.String
}) {}

const NotImplementedBody = Schema.Struct({
  statusCode: Schema.Literal(501),
  message: Schema.String,
  error: Schema.Literal("Not Implemented")
}).annotate({ identifier: "NotImplemented" })

export const NotImplementedWire: Schema.Codec<NotImplemented, typeof NotImplementedBody.Encoded> = NotImplementedBody.pipe(
  Schema.decodeTo(
    Schema.toType(NotImplemented),
    SchemaTransformation.transform({
      decode: (body) => new NotImplemented({ message: body.message }),
      encode: ({ message }) => ({ statusCode: 501 as const, message, error: "Not Implemented" as const })
    })
  )
).annotate({ httpApiStatus: 501 })

export const isNotImplemented = (u: unknown): u is NotImplemented => u instanceof NotImplemented
