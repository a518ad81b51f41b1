/**
 * HttpApi declares its own decode-error shape on every endpoint; our servers answer decode
 * failures as BadRequest (see http/errorResponse.ts), so the documents say so.
 */
export function advertiseOwnDecodeErrors(spec: Record<string, any>): Record<string, any> {
  const decodeRef = "#/components/schemas/HttpApiDecodeError"
  const json = JSON.stringify(spec, (key, value) =>
    key === "schema" && Array.isArray(value?.anyOf) && value.anyOf.some((s: any) => s.$ref === decodeRef)
      ? (value.anyOf.length === 2 ? value.anyOf.find((s: any) => s.$ref !== decodeRef) : { anyOf: value.anyOf.filter((s: any) => s.$ref !== decodeRef) })
      : value)
  const out = JSON.parse(json)
  delete out.components.schemas.HttpApiDecodeError
  for (const path of Object.values(out.paths as Record<string, unknown>)) {
    for (const op of Object.values(path as Record<string, any>)) {
      const bad = op?.responses?.["400"]
      if (bad !== undefined) bad.description = "The request is malformed: the message names the field"
    }
  }
  return out
}
