/**
 * An optional field as JSON has it: the key is absent or holds a value of `schema`. The decoded
 * type also takes `undefined` (code may write `field: maybe`), and `undefined` is left out when
 * encoding. Effect 4's `Schema.optional` would instead carry `undefined` as JSON `null` through
 * the HttpApi codecs: a body's `null` accepted, `null` written in answers, `| null` in the
 * document. Annotate `schema` itself (its description is the property's in the document).
 */
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"

export const optional = <S extends Schema.Top>(schema: S) =>
  Schema.optionalKey(schema).pipe(
    Schema.decodeTo(Schema.optional(Schema.toType(schema)), {
      decode: SchemaGetter.passthroughSupertype(),
      encode: SchemaGetter.transformOptional(Option.filter(Predicate.isNotUndefined))
    })
  )
