/**
 * A tool's input or output schema as MCP wants it: a JSON Schema whose top level is the object
 * itself (`type: "object"`), derived once from the Effect Schema with `Schema.toJsonSchemaDocument`
 * (draft 2020-12, the MCP default dialect: `dependentRequired` and `$defs` are 2019-09+ keywords).
 * Named sub-schemas stay in `$defs`; a top-level `$ref` to a named schema is inlined. Objects are
 * closed (`additionalProperties: false`), as the arguments are decoded.
 */
import * as Schema from "effect/Schema"

export interface ObjectJsonSchema {
  readonly type: "object"
  readonly properties?: Record<string, object>
  readonly required?: Array<string>
  readonly [key: string]: unknown
}

const isEmptyStruct = (schema: Record<string, any>): boolean =>
  schema.type === undefined && schema.not?.type === "null" && Object.keys(schema.not).length === 1

/**
 * Effect 4 appends a check's JSON Schema as an `allOf` member; `dependentRequired` (the signal
 * pair of src/api/dtos.ts) goes back beside the properties it names, as main advertised it, and
 * the member's own `allOf` joins the parent's. Equivalent schemas; clients read it at the top.
 */
const hoistDependentRequired = (schema: Record<string, any>): Record<string, any> => {
  if (!Array.isArray(schema.allOf) || schema.dependentRequired !== undefined) return schema
  let dependentRequired: unknown
  const allOf: Array<unknown> = []
  for (const member of schema.allOf as Array<Record<string, any>>) {
    const keys = Object.keys(member)
    if (dependentRequired === undefined && member.dependentRequired !== undefined &&
      keys.every((k) => k === "dependentRequired" || (k === "allOf" && Array.isArray(member.allOf)))) {
      dependentRequired = member.dependentRequired
      allOf.push(...(member.allOf ?? []))
    } else allOf.push(member)
  }
  if (dependentRequired === undefined) return schema
  const { allOf: _, ...rest } = schema
  return { ...rest, ...(allOf.length > 0 ? { allOf } : {}), dependentRequired }
}

export const objectJsonSchema = (schema: Schema.Top): ObjectJsonSchema => {
  const document = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" })
  // A plain JSON copy: the document's objects are shared with Effect's caches.
  const doc = JSON.parse(JSON.stringify(document.schema)) as Record<string, any>
  const defs = JSON.parse(JSON.stringify(document.definitions)) as Record<string, any>
  let out: Record<string, any> = doc
  const ref = typeof doc.$ref === "string" ? /^#\/\$defs\/(.+)$/.exec(doc.$ref)?.[1] : undefined
  if (ref !== undefined && defs[ref] !== undefined) {
    // The top-level schema is referenced by name only from the top (no recursion in tool schemas).
    const { [ref]: top, ...rest } = defs
    out = { ...top, ...(Object.keys(rest).length > 0 ? { $defs: rest } : {}) }
  } else if (Object.keys(defs).length > 0) {
    out = { ...doc, $defs: defs }
  }
  // Effect 4 renders a Struct of no fields as TypeScript's `{}` (anything but null); with unknown
  // keys refused it is the empty closed object (main's explicit `jsonSchema` annotation).
  if (isEmptyStruct(out)) {
    const { not: _, ...annotations } = out
    out = { type: "object", properties: {}, additionalProperties: false, ...annotations }
  }
  out = hoistDependentRequired(out)
  if (out.type !== "object") throw new Error(`A tool schema must be an object schema, got ${JSON.stringify(out).slice(0, 200)}`)
  return out as ObjectJsonSchema
}
