/**
 * What the generated OpenAPI documents must say that HttpApi cannot express by itself, so that
 * each document describes exactly what our servers do (both APIs use it):
 * - decode failures are answered as BadRequest (http/errors/errorResponse.ts), not HttpApiDecodeError;
 * - every request body goes through the JSON input check (http/input/jsonInput.ts): another media
 *   type is a 415 (on any method), and a body whose fields are all optional may be omitted;
 * - a write may be refused 403 (another site's, src/http/input/crossSite.ts);
 * - the Node server answers 408 and 431 (in the error shape) before any route is chosen;
 * - a parameter carries its schema's description;
 * - free-form values carry no `$id` (Effect marks `unknown` with "/schemas/unknown", which
 *   resolvers take for a reference to fetch).
 */

/** Answers the Node server gives any request before routing (src/http/server/nodeServer.ts). */
const SERVER_ERRORS = {
  408: ["Request Timeout", "The request (headers or body) was not received in time"],
  431: ["Request Header Fields Too Large", "The request line and headers exceed the size or count limit"]
} as const

const errorSchema = (status: number, name: string) => ({
  type: "object",
  required: ["statusCode", "message", "error"],
  properties: {
    statusCode: { type: "number", enum: [status] },
    message: { type: "string" },
    error: { type: "string", enum: [name] }
  },
  additionalProperties: false
})

const BODY_METHODS = new Set(["post", "put", "patch", "delete"])

const schemaOf = (spec: Record<string, any>, schema: any): any =>
  typeof schema?.$ref === "string" ? spec.components.schemas[schema.$ref.split("/").pop()] : schema

export function advertiseOwnDecodeErrors(spec: Record<string, any>): Record<string, any> {
  const decodeRef = "#/components/schemas/HttpApiDecodeError"
  const json = JSON.stringify(spec, (key, value) => {
    if (key === "schema" && Array.isArray(value?.anyOf) && value.anyOf.some((s: any) => s.$ref === decodeRef)) {
      return value.anyOf.length === 2
        ? value.anyOf.find((s: any) => s.$ref !== decodeRef)
        : { anyOf: value.anyOf.filter((s: any) => s.$ref !== decodeRef) }
    }
    if (typeof value?.$id === "string" && value.$id.startsWith("/schemas/")) {
      const { $id: _, ...rest } = value
      return rest
    }
    return value
  })
  const out = JSON.parse(json)
  delete out.components.schemas.HttpApiDecodeError
  // Only HttpApiDecodeError referred to these.
  if (!JSON.stringify(out).includes("#/components/schemas/Issue\"")) delete out.components.schemas.Issue
  if (!JSON.stringify(out).includes("#/components/schemas/PropertyKey\"")) delete out.components.schemas.PropertyKey
  for (const path of Object.values(out.paths as Record<string, unknown>)) {
    for (const [method, op] of Object.entries(path as Record<string, any>)) {
      // A parameter says what its schema says, where readers of the operation look first.
      for (const parameter of op?.parameters ?? []) {
        if (parameter.description === undefined && typeof parameter.schema?.description === "string") {
          parameter.description = parameter.schema.description
        }
      }
      const bad = op?.responses?.["400"]
      if (bad !== undefined) bad.description = "The request is malformed: the message names the field"
      for (const [status, [name, description]] of Object.entries(SERVER_ERRORS)) {
        const id = name.replace(/ /g, "")
        out.components.schemas[id] = errorSchema(Number(status), name)
        op.responses[status] ??= {
          description,
          content: { "application/json": { schema: { $ref: `#/components/schemas/${id}` } } }
        }
      }
      // Any body sent, even to an operation that takes none (a GET's included), must be JSON.
      out.components.schemas.UnsupportedMediaType = errorSchema(415, "Unsupported Media Type")
      op.responses["415"] = {
        description: "The body is not JSON: send Content-Type application/json (UTF-8)",
        content: { "application/json": { schema: { $ref: "#/components/schemas/UnsupportedMediaType" } } }
      }
      if (!BODY_METHODS.has(method)) continue
      // Writes from another site are refused (src/http/input/crossSite.ts); four-eyes refuses too.
      out.components.schemas.Forbidden ??= errorSchema(403, "Forbidden")
      op.responses["403"] ??= {
        description: "A write from another site (Sec-Fetch-Site / Origin), or a rule that refuses this caller",
        content: { "application/json": { schema: { $ref: "#/components/schemas/Forbidden" } } }
      }
      const body = op?.requestBody?.content?.["application/json"]
      if (body === undefined) continue
      // An empty body reads as `{}`: optional when `{}` is a valid body.
      const schema = schemaOf(out, body.schema)
      if ((schema?.required ?? []).length === 0 && schema?.type === "object" && schema.allOf === undefined && schema.oneOf === undefined) {
        op.requestBody.required = false
      }
    }
  }
  return out
}
