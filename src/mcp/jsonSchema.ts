/**
 * A tool's input or output schema as MCP wants it: a JSON Schema whose top level is the object
 * itself (`type: "object"`), derived once from the Effect Schema with `JSONSchema.make`. Named
 * sub-schemas stay in `$defs`; the top-level `$ref` Effect emits for a named schema is inlined,
 * and `$schema` is dropped so the MCP default dialect (2020-12) applies (`dependentRequired`
 * and `$defs` are 2019-09+ keywords).
 */
import * as JSONSchema from "effect/JSONSchema"
import type * as Schema from "effect/Schema"

export interface ObjectJsonSchema {
  readonly type: "object"
  readonly properties?: Record<string, object>
  readonly required?: Array<string>
  readonly [key: string]: unknown
}

/**
 * Without Effect's `$id` markers of free-form values ("/schemas/unknown", "/schemas/{}"): one
 * marker on several subschemas is an ambiguous reference to a validator (as in
 * src/api/openapiTransform.ts for the OpenAPI documents).
 */
const withoutMarkers = (doc: unknown): Record<string, any> =>
  JSON.parse(JSON.stringify(doc, (_, value) => {
    if (typeof value?.$id === "string" && value.$id.startsWith("/schemas/")) {
      const { $id: _id, ...rest } = value
      return rest
    }
    return value
  }))

export const objectJsonSchema = (schema: Schema.Schema<any, any, never>): ObjectJsonSchema => {
  const { $schema: _, ...doc } = withoutMarkers(JSONSchema.make(schema))
  let out: Record<string, any> = doc
  const ref = typeof doc.$ref === "string" ? /^#\/\$defs\/(.+)$/.exec(doc.$ref)?.[1] : undefined
  if (ref !== undefined && doc.$defs?.[ref] !== undefined) {
    const { [ref]: top, ...defs } = doc.$defs as Record<string, any>
    // The top-level schema is referenced by name only from the top (no recursion in tool schemas).
    out = { ...top, ...(Object.keys(defs).length > 0 ? { $defs: defs } : {}) }
  }
  if (out.type !== "object") throw new Error(`A tool schema must be an object schema, got ${JSON.stringify(out).slice(0, 200)}`)
  return out as ObjectJsonSchema
}
