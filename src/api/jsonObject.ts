/**
 * A free-form JSON object (any keys, any values), checked by a type guard instead of being
 * decoded key by key. `Schema.Record(Schema.String, Schema.Unknown)` walked every key and copied
 * every object: in an ingest of 1,000 events of 5 keys 2.4 of 3.1 ms of the payload's decode
 * (and its garbage), and for a 24 MB batch of 8,000 events of 100 keys 640 ms of one synchronous
 * stretch. The keys and values were already checked where the body was parsed
 * (../http/input/jsonInput.ts: depth, `__proto__`, NUL, lone surrogates), and nothing mutates a
 * decoded value. Its JSON form (OpenAPI, JSON Schema, generated values) is the record's.
 */
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"

/** A non-null, non-array object: what JSON calls an object. */
export const isJsonObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const AsRecord = Schema.Record(Schema.String, Schema.Unknown)

/**
 * The schema, with `annotations` (identifier, description). Its own JSON form: HttpApi decodes a
 * payload through `Schema.toCodecJson`, which for a declaration linked to the record would walk
 * the record anyway; the object came from JSON, so it is kept as it is. JSON Schema gets
 * `{"type": "object"}` from a check that tests nothing (a declaration alone has no JSON Schema),
 * and generated values are the record's.
 */
export const jsonObject = (annotations: { readonly identifier?: string; readonly description?: string } = {}) =>
  Schema.declare(isJsonObject, {
    expected: "object",
    toCodecJson: () => undefined,
    toCodecArbitrary: () => Schema.link<Record<string, unknown>>()(AsRecord, SchemaTransformation.passthrough())
  }).check(Schema.makeFilter(() => true, { toJsonSchema: () => ({ type: "object" }) })).annotate(annotations)

/**
 * Any JSON value, its own JSON form: what `Schema.Unknown` is in a record of JSON values, without
 * the JSON codec's walk of the whole value to see that it is JSON (a created task whose 25 MB
 * context is a rest record's value: 0.4 s of one stretch to encode the answer). Only values that
 * came from JSON (a body, the store) reach it. JSON Schema `{}` as for `Unknown`.
 */
export const JsonValue = Schema.declare((_: unknown): _ is unknown => true, {
  expected: "a JSON value",
  toCodecJson: () => undefined,
  toCodecArbitrary: () => Schema.link<unknown>()(Schema.Unknown, SchemaTransformation.passthrough())
})

/** A record of JSON values (the rest of an open struct), walked key by key but not value by value. */
export const JsonRecord = Schema.Record(Schema.String, JsonValue)
