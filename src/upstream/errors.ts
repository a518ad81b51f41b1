/**
 * The one error the workspace API adds to the gateway's set: 501, for the registry and webhook
 * operations when the server runs without the embedded store behind them. Same body shape as
 * every other error: `{statusCode, message, error}`.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Schema from "effect/Schema"

export class NotImplemented extends Schema.TaggedError<NotImplemented>()("NotImplemented", {
  statusCode: Schema.Literal(501).pipe(Schema.propertySignature, Schema.withConstructorDefault(() => 501 as const)),
  error: Schema.Literal("Not Implemented").pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => "Not Implemented" as const)
  ),
  message: Schema.String
}) {}

export const NotImplementedWire: Schema.Schema<
  NotImplemented,
  { readonly statusCode: 501; readonly message: string; readonly error: "Not Implemented" }
> = Schema.transform(
  Schema.Struct({ statusCode: Schema.Literal(501), message: Schema.String, error: Schema.Literal("Not Implemented") }),
  Schema.typeSchema(NotImplemented),
  {
    strict: false,
    decode: (body) => new NotImplemented({ message: body.message }),
    encode: ({ message }) => ({ statusCode: 501 as const, message, error: "Not Implemented" as const })
  }
).annotations(HttpApiSchema.annotations({ status: 501 })) as any

export const isNotImplemented = (u: unknown): u is NotImplemented => u instanceof NotImplemented
