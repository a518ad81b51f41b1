/**
 * Checks HTTP exchanges against a published OpenAPI 3.1 document with Ajv (JSON Schema
 * 2020-12, the dialect OpenAPI 3.1 uses) and ajv-formats. Nothing here knows the gateway's
 * shapes: every expectation comes from the document given to `makeContract`.
 *
 * - responses: the status is declared for the operation (or by a `default`/`4XX` range),
 *   the Content-Type is one the declaration lists, a body-less declaration has no body, and a
 *   JSON body validates against the declared schema;
 * - requests: whether a request conforms to the document (parameters, requestBody media type
 *   and schema), so that a caller can insist that a non-conforming request is not accepted.
 *
 * `#/components/schemas/...` references are resolved by registering the document's components
 * as one schema (`urn:contract:<title>`) and pointing the references at its `$defs`.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"

// ajv-formats is CommonJS with `exports.default`; under NodeNext the default import is the module object.
const addFormats: (ajv: Ajv2020) => Ajv2020 =
  (addFormatsModule as unknown as { default?: (ajv: Ajv2020) => Ajv2020 }).default ??
    (addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020)

export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

export interface WireResponse {
  readonly status: number
  /** Header names in lower case; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>
  readonly bytes: Buffer
}

/** What the server received, decoded: path and query values as the router will see them. */
export interface DecodedRequest {
  readonly method: string
  /** OpenAPI path template, e.g. `/v1/tasks/{taskId}/ui`. */
  readonly template: string
  /** Decoded path parameter values; `undefined` when a segment is not valid percent-encoding. */
  readonly pathParams: Readonly<Record<string, string | undefined>>
  /** Decoded query pairs; a value is `undefined` when it is not valid percent-encoding. */
  readonly query: ReadonlyArray<readonly [string, string | undefined]>
  readonly headers: Readonly<Record<string, string>>
  readonly contentType: string | undefined
  readonly body: Buffer | undefined
}

export interface OpenApiOperation {
  readonly method: string
  readonly template: string
  readonly operationId: string | undefined
  readonly op: any
}

const JSON_MEDIA = /^application\/(?:[\w.!#$&^-]+\+)?json$/i

/** The media type's essence (`type/subtype`), lower case, without parameters. */
export const essenceOf = (contentType: string | undefined): string | undefined =>
  contentType === undefined ? undefined : contentType.split(";", 1)[0]!.trim().toLowerCase()

/** Whether a declared media range (`application/json`, `text/*`, `*\/*`) covers an actual type. */
const covers = (range: string, actual: string): boolean => {
  const [rt, rs] = range.toLowerCase().split(";", 1)[0]!.trim().split("/")
  const [at, as] = actual.split("/")
  return (rt === "*" || rt === at) && (rs === "*" || rs === as)
}

const isJsonMedia = (mediaType: string) => JSON_MEDIA.test(mediaType.split(";", 1)[0]!.trim())

const describeErrors = (errors: ReadonlyArray<ErrorObject> | null | undefined): string =>
  (errors ?? []).slice(0, 5).map((e) => {
    const extra = e.keyword === "additionalProperties"
      ? ` (${JSON.stringify((e.params as { additionalProperty?: string }).additionalProperty)})`
      : e.keyword === "enum" || e.keyword === "const"
      ? ` (${JSON.stringify(e.params).slice(0, 120)})`
      : ""
    return `${e.instancePath === "" ? "body" : e.instancePath} ${e.message ?? e.keyword}${extra}`
  }).join("; ")

const truncate = (s: string, n = 300) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s)

export interface Contract {
  readonly doc: any
  readonly operations: ReadonlyArray<OpenApiOperation>
  readonly operation: (method: string, template: string) => OpenApiOperation | undefined
  /** Methods the document declares for a path template, upper case. */
  readonly methodsOf: (template: string) => ReadonlyArray<string>
  /** Problems of a response to an operation of the document; empty when it matches. */
  readonly checkResponse: (method: string, template: string, res: WireResponse) => ReadonlyArray<string>
  /** Ways a request departs from the document; empty when it conforms. */
  readonly checkRequest: (req: DecodedRequest) => ReadonlyArray<string>
  /** Validates a JSON value against a component schema by name (e.g. `NotFound`). */
  readonly checkComponent: (name: string, value: unknown) => ReadonlyArray<string>
  readonly hasComponent: (name: string) => boolean
  /** What keeps the document itself from being read as JSON Schema 2020-12 as published. */
  readonly documentProblems: ReadonlyArray<string>
}

/**
 * Subschemas that carry the same `$id` with different contents: JSON Schema 2020-12 gives an
 * identifier one schema, so a conforming validator refuses such a document.
 */
export const ambiguousIds = (doc: unknown): ReadonlyArray<string> => {
  const byId = new Map<string, Set<string>>()
  JSON.stringify(doc, (_key, value) => {
    if (value !== null && typeof value === "object" && typeof value.$id === "string") {
      const variants = byId.get(value.$id) ?? new Set<string>()
      variants.add(JSON.stringify(value))
      byId.set(value.$id, variants)
    }
    return value
  })
  return [...byId].filter(([, v]) => v.size > 1).map(([id, v]) =>
    `$id ${JSON.stringify(id)} names ${v.size} different subschemas: ${[...v].join(" / ")}`
  )
}

export const makeContract = (doc: any): Contract => {
  if (typeof doc?.openapi !== "string" || !doc.openapi.startsWith("3.1")) {
    throw new Error(`expected an OpenAPI 3.1 document, got ${String(doc?.openapi)}`)
  }
  const base = `urn:contract:${encodeURIComponent(String(doc.info?.title ?? "api"))}`
  // Strict about keywords and formats; not about `minimum` beside an `allOf` without `type`
  // (valid JSON Schema that Ajv's strictTypes flags as a style matter).
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    validateFormats: true
  })
  addFormats(ajv)
  // OpenAPI's own format names that JSON Schema leaves open: annotations only.
  for (const f of ["binary", "byte", "int32", "int64", "float", "double", "password"]) {
    if (ajv.formats[f] === undefined) ajv.addFormat(f, true)
  }
  // The OpenAPI 3.1 base dialect's extra vocabulary (annotations for validation purposes).
  ajv.addVocabulary(["discriminator", "xml", "externalDocs", "example"])

  const components: Record<string, unknown> = doc.components?.schemas ?? {}
  const documentProblems = ambiguousIds(doc)
  /**
   * Points `#/components/schemas/X` at the registered root. Embedded relative `$id`s (Effect
   * marks "any value" subschemas `/schemas/unknown`) are dropped: they identify nothing a
   * reference uses, and repeated with different contents they would stop Ajv (reported in
   * `documentProblems` instead).
   */
  const relink = (schema: unknown): unknown =>
    JSON.parse(JSON.stringify(schema), function(this: any, key, value) {
      if (key === "$ref" && typeof value === "string" && value.startsWith("#/components/schemas/")) {
        return `${base}#/$defs/${value.slice("#/components/schemas/".length)}`
      }
      if (key === "$id" && typeof value === "string" && value.startsWith("/")) return undefined
      return value
    })
  ajv.addSchema({ $id: base, $defs: relink(components) as object })

  const compiled = new Map<string, ValidateFunction>()
  const validatorOf = (schema: unknown): ValidateFunction => {
    const key = JSON.stringify(schema)
    let v = compiled.get(key)
    if (v === undefined) {
      v = ajv.compile(relink(schema) as object)
      compiled.set(key, v)
    }
    return v
  }
  const validate = (schema: unknown, value: unknown): ReadonlyArray<string> => {
    const v = validatorOf(schema)
    return v(value) ? [] : [describeErrors(v.errors)]
  }

  const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
  const operations: Array<OpenApiOperation> = Object.entries(doc.paths ?? {}).flatMap(([template, item]: [string, any]) =>
    METHODS.filter((m) => item[m] !== undefined).map((m) => ({
      method: m.toUpperCase(),
      template,
      operationId: item[m].operationId,
      op: item[m]
    }))
  )
  const operation = (method: string, template: string) =>
    operations.find((o) => o.method === method.toUpperCase() && o.template === template)

  const parametersOf = (template: string, op: any): ReadonlyArray<any> => {
    const shared: ReadonlyArray<any> = doc.paths?.[template]?.parameters ?? []
    const own: ReadonlyArray<any> = op.parameters ?? []
    return [...shared.filter((p) => !own.some((o) => o.name === p.name && o.in === p.in)), ...own]
  }

  const checkResponse = (method: string, template: string, res: WireResponse): ReadonlyArray<string> => {
    const found = operation(method, template)
    if (found === undefined) return [`${method} ${template} is not an operation of the document`]
    const responses: Record<string, any> = found.op.responses ?? {}
    const declared = responses[String(res.status)] ?? responses[`${String(res.status)[0]}XX`] ?? responses.default
    if (declared === undefined) {
      return [`status ${res.status} is not declared (declared: ${Object.keys(responses).join(", ")})`]
    }
    const content: Record<string, any> | undefined = declared.content
    const contentType = res.headers["content-type"]
    if (content === undefined || Object.keys(content).length === 0) {
      return res.bytes.length === 0 ? [] : [`status ${res.status} declares no body, got ${res.bytes.length} bytes`]
    }
    const essence = essenceOf(contentType)
    if (essence === undefined) return [`status ${res.status}: no Content-Type (declared: ${Object.keys(content).join(", ")})`]
    const range = Object.keys(content).find((r) => covers(r, essence))
    if (range === undefined) {
      return [`status ${res.status}: Content-Type ${contentType} is not declared (declared: ${Object.keys(content).join(", ")})`]
    }
    const schema = content[range]?.schema
    if (!isJsonMedia(essence)) return []
    let body: unknown
    try {
      body = JSON.parse(res.bytes.toString("utf8"))
    } catch {
      return [`status ${res.status}: body is not JSON: ${truncate(res.bytes.toString("utf8"), 120)}`]
    }
    if (schema === undefined) return []
    return validate(schema, body).map((e) => `status ${res.status}: ${e}`)
  }

  const checkRequest = (req: DecodedRequest): ReadonlyArray<string> => {
    const found = operation(req.method, req.template)
    if (found === undefined) return [`${req.method} ${req.template} is not an operation of the document`]
    const problems: Array<string> = []
    for (const p of parametersOf(req.template, found.op)) {
      const values: ReadonlyArray<string | undefined> = p.in === "path"
        ? [req.pathParams[p.name]]
        : p.in === "query"
        ? req.query.filter(([k]) => k === p.name).map(([, v]) => v)
        : p.in === "header"
        ? (req.headers[String(p.name).toLowerCase()] === undefined ? [] : [req.headers[String(p.name).toLowerCase()]])
        : []
      if (values.length === 0) {
        if (p.required === true) problems.push(`${p.in} parameter ${p.name} is required`)
        continue
      }
      const schema = p.schema ?? {}
      const isArray = schema.type === "array"
      if (!isArray && values.length > 1) problems.push(`${p.in} parameter ${p.name} is given ${values.length} times`)
      for (const value of values) {
        if (value === undefined) {
          problems.push(`${p.in} parameter ${p.name} is not valid percent-encoding`)
          continue
        }
        // Parameters travel as strings; a string-typed schema validates the string, others its JSON reading.
        const candidate = isArray
          ? [value]
          : schema.type === "string" || schema.$ref !== undefined || schema.type === undefined
          ? value
          : (() => {
            try {
              return JSON.parse(value)
            } catch {
              return value
            }
          })()
        const direct = validate(schema, candidate)
        // A $ref to a non-string schema (e.g. an integer) reads the string as JSON, like the typed branch.
        const viaJson = direct.length > 0 && schema.$ref !== undefined
          ? (() => {
            try {
              return validate(schema, JSON.parse(value))
            } catch {
              return direct
            }
          })()
          : direct
        for (const e of viaJson) problems.push(`${p.in} parameter ${p.name}: ${e.replace(/^body/, "value")}`)
      }
    }
    const requestBody = found.op.requestBody
    if (requestBody === undefined) return problems
    const content: Record<string, any> = requestBody.content ?? {}
    const essence = essenceOf(req.contentType)
    // Zero bytes are content only for a declared non-JSON media type (an empty file); otherwise no body.
    const hasBody = req.body !== undefined &&
      (req.body.length > 0 ||
        (essence !== undefined && Object.keys(content).some((r) => covers(r, essence) && !isJsonMedia(r))))
    if (!hasBody) {
      // No body at all: conforming only where the body is optional, or where an empty object would be.
      if (requestBody.required === true) {
        const json = Object.entries(content).find(([range]) => isJsonMedia(range))
        if (json === undefined || validate(json[1]?.schema ?? {}, {}).length > 0) problems.push("requestBody is required")
      }
      return problems
    }
    if (essence === undefined) return [...problems, "requestBody sent without a Content-Type"]
    const range = Object.keys(content).find((r) => covers(r, essence))
    if (range === undefined) {
      return [...problems, `requestBody media type ${essence} is not declared (declared: ${Object.keys(content).join(", ")})`]
    }
    if (!isJsonMedia(essence)) return problems
    const charset = /;\s*charset="?([^";]+)"?/i.exec(req.contentType ?? "")?.[1]
    if (charset !== undefined && charset.toLowerCase() !== "utf-8") problems.push(`requestBody charset ${charset} is not UTF-8`)
    let text: string
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(req.body)
    } catch {
      return [...problems, "requestBody is not valid UTF-8"]
    }
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      return [...problems, "requestBody is not valid JSON"]
    }
    const schema = content[range]?.schema
    if (schema !== undefined) for (const e of validate(schema, body)) problems.push(`requestBody: ${e}`)
    return problems
  }

  // Compile every declared schema now: a schema Ajv cannot read fails here, not mid-run.
  for (const { op } of operations) {
    for (const response of Object.values<any>(op.responses ?? {})) {
      for (const media of Object.values<any>(response?.content ?? {})) if (media?.schema !== undefined) validatorOf(media.schema)
    }
    for (const media of Object.values<any>(op.requestBody?.content ?? {})) if (media?.schema !== undefined) validatorOf(media.schema)
    for (const p of op.parameters ?? []) if (p?.schema !== undefined) validatorOf(p.schema)
  }

  const methodsOf = (template: string) => operations.filter((o) => o.template === template).map((o) => o.method)
  const hasComponent = (name: string) => components[name] !== undefined
  const checkComponent = (name: string, value: unknown) =>
    hasComponent(name) ? validate({ $ref: `#/components/schemas/${name}` }, value) : [`no component ${name}`]

  return { doc, operations, operation, methodsOf, checkResponse, checkRequest, checkComponent, hasComponent, documentProblems }
}
