/**
 * Requests for every operation of an HttpApi, generated from the API definition itself:
 * `HttpApi.reflect` lists the operations (method, path template, path / query / header /
 * payload schemas), fast-check arbitraries are built from those schemas' ASTs (see
 * `arbitraryOf`), and the schemas encode the values to the wire. Nothing here names an endpoint,
 * so a new one is covered as soon as it is added to the API.
 *
 * Two things are added to plain schema-derived generation:
 * - hints: values that exist in the world under test (ids, slugs, ledgers, ... collected from
 *   the fixture by property name, plus a few domain words) are mixed in, typed by the
 *   property's own schema, so that some requests reach deep code instead of 404s;
 * - custom filters (`Schema.makeFilter` predicates no generator can aim at, such as a
 *   cross-field rule) are satisfied from candidates where possible and otherwise tried a
 *   bounded number of times, so generation never spins.
 *
 * Mutations then turn valid requests into hostile ones (see `MUTATIONS`).
 */
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as HttpMethod from "effect/http/HttpMethod"
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import type * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import * as fc from "fast-check"

// ---------------------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------------------

export interface Operation {
  readonly group: string
  readonly name: string
  readonly method: string
  /** The HttpApi path, e.g. `/v1/tasks/:taskId/ui`. */
  readonly path: string
  /** The same path as the OpenAPI document writes it, e.g. `/v1/tasks/{taskId}/ui`. */
  readonly template: string
  readonly pathParams: ReadonlyArray<string>
  readonly pathSchema: Option.Option<Schema.Top>
  readonly urlParamsSchema: Option.Option<Schema.Top>
  readonly headersSchema: Option.Option<Schema.Top>
  /** One entry per request schema and media type the endpoint takes. */
  readonly payloads: ReadonlyArray<{ readonly encoding: HttpApiSchema.PayloadEncoding; readonly schema: Schema.Top }>
}

const PARAM = /:(\w+)\??/g

/** Every endpoint of the API, in definition order. */
export const operationsOf = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): ReadonlyArray<Operation> => {
  const out: Array<Operation> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group }) => {
      const buffered = [...endpoint.payload.values()].flatMap((entry) =>
        entry.encoding._tag === "Stream" ? [] : entry.schemas.map((schema) => ({ encoding: entry.encoding as HttpApiSchema.PayloadEncoding, schema }))
      )
      // A payload on a bodyless method is its query (as the OpenAPI document reads it).
      const bodyless = !HttpMethod.hasBody(endpoint.method)
      const query = endpoint.query ?? (bodyless && buffered.length === 1 ? buffered[0]!.schema : undefined)
      out.push({
        group: group.identifier,
        name: endpoint.identifier,
        method: endpoint.method,
        path: endpoint.path,
        template: endpoint.path.replace(PARAM, "{$1}"),
        pathParams: [...endpoint.path.matchAll(PARAM)].map((m) => m[1]!),
        pathSchema: Option.fromUndefinedOr(endpoint.params),
        urlParamsSchema: Option.fromUndefinedOr(query),
        headersSchema: Option.fromUndefinedOr(endpoint.headers),
        payloads: bodyless ? [] : buffered
      })
    }
  })
  return out
}

// ---------------------------------------------------------------------------------------------
// Hints: values of the world under test, by property name
// ---------------------------------------------------------------------------------------------

export type Hints = Readonly<Record<string, ReadonlyArray<unknown>>>

/**
 * A few domain words the fixture does not spell as property values (column keys, providers,
 * signal names, start contexts). Each is only used where the property's schema accepts it.
 */
export const DOMAIN_HINTS: Hints = {
  ledger: ["expenses", "journal_proposals"],
  field: ["amount_gross", "merchant", "currency", "status"],
  value: [12.5, "42.10", null, true, "USD", ""],
  provider: ["inline_base64", "url", "local"],
  data: ["aGVsbG8gd29ybGQ=", "", { amount: 12.5, merchant: "Cafe" }],
  fileRef: [
    { provider: "inline_base64", data: "aGVsbG8gd29ybGQ=" },
    { provider: "url", url: "http://127.0.0.1:9/x.txt" },
    { provider: "local", path: "/etc/passwd" },
    { provider: "nope" }
  ],
  context: [{ period: "2026-11" }, { accountId: "1010" }, { period: "2026-13" }, {}],
  signalName: ["file_submitted", "approve", "reject", "user_action"],
  name: ["approve", "reject", "file_submitted", "user_action"],
  type: ["approved", "rejected", "step.completed", "reasoning.delta"],
  action: ["reject_row", "edit_cell"],
  contentType: ["text/plain", "application/pdf", "image/png"],
  filename: ["receipt.txt", "a.pdf"],
  fileName: ["receipt.txt", "../../etc/passwd"],
  period: ["2026-11", "2026-13"],
  kind: ["expense", "claude", "openai"],
  externalRef: ["claude://agent_123", "agent_123"],
  serviceId: ["quickbooks_online", "xero"],
  service: ["quickbooks_online", "xero"],
  version: ["v1", "v2"],
  payload: [{}, { reason: "ok" }],
  seq: [0, 1, 2, 3],
  limit: [1, 20, 1000]
}

/** Collects primitive (and small object) values by the property name they appear under. */
export const hintsFromFixture = (fixture: unknown): Record<string, Array<unknown>> => {
  const pools: Record<string, Array<unknown>> = {}
  const add = (key: string, value: unknown) => {
    const pool = (pools[key] ??= [])
    const text = JSON.stringify(value)
    if (text.length < 2000 && pool.length < 40 && !pool.some((v) => JSON.stringify(v) === text)) pool.push(value)
  }
  const walk = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(walk)
    else if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) {
        add(k, v)
        // A record's id names it where other records refer to it: `tasks[].id` is a `taskId`.
        walk(v)
      }
    }
  }
  walk(fixture)
  // Ids of records are what other records and paths call `<record>Id`.
  if (fixture !== null && typeof fixture === "object") {
    for (const [collection, items] of Object.entries(fixture as Record<string, unknown>)) {
      if (!Array.isArray(items)) continue
      // `entities` → entityId; a compound name also by its last word: `subledgerRows` → subledgerRowId, rowId.
      const singular = collection.replace(/ies$/, "y").replace(/s$/, "")
      const last = singular.replace(/^.*([A-Z])/, (_, c: string) => c.toLowerCase())
      for (const item of items) {
        if (item === null || typeof item !== "object" || !("id" in item)) continue
        add(`${singular}Id`, (item as { id: unknown }).id)
        if (last !== singular) add(`${last}Id`, (item as { id: unknown }).id)
      }
    }
  }
  return pools
}

export const mergeHints = (...all: ReadonlyArray<Hints>): Hints => {
  const out: Record<string, Array<unknown>> = {}
  for (const hints of all) {
    for (const [k, vs] of Object.entries(hints)) {
      const pool = (out[k] ??= [])
      for (const v of vs) if (!pool.some((p) => JSON.stringify(p) === JSON.stringify(v))) pool.push(v)
    }
  }
  return out
}

/**
 * The hints for a property: by its exact name, else by the name it ends with
 * (`signalTaskId` takes the `taskId` pool, `consumerId` none).
 */
export const hintsFor = (hints: Hints, name: string): ReadonlyArray<unknown> => {
  const exact = hints[name]
  if (exact !== undefined) return exact
  const suffix = Object.keys(hints).find((k) => k.length > 2 && name.endsWith(k[0]!.toUpperCase() + k.slice(1)))
  return suffix === undefined ? [] : hints[suffix]!
}

/** Every string in a value, plus composite child ids `<uuid>:<step>:<slug>` built from its UUIDs. */
export const stringsOf = (value: unknown): ReadonlyArray<string> => {
  const out = new Set<string>()
  const walk = (v: unknown) => {
    if (typeof v === "string") out.add(v)
    else if (Array.isArray(v)) v.forEach(walk)
    else if (v !== null && typeof v === "object") Object.values(v).forEach(walk)
  }
  walk(value)
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
  for (const s of [...out]) {
    if (uuid.test(s)) {
      out.add(`${s}:review_expenses:child`)
      out.add(`${s}:upload_receipts:extract:sub:leaf`)
    }
  }
  return [...out]
}

// ---------------------------------------------------------------------------------------------
// Arbitraries from schemas
// ---------------------------------------------------------------------------------------------

const schemaOf = (ast: AST.AST): Schema.Top => Schema.make<Schema.Top>(ast)

/** The node with other checks (SchemaAST's own `replaceChecks` is internal): a copy, as SchemaAST copies. */
const withChecks = <A extends AST.AST>(ast: A, checks: ReadonlyArray<AST.Check<unknown>>): A =>
  Object.assign(Object.create(Object.getPrototypeOf(ast)), ast, { checks: checks.length > 0 ? checks : undefined })

const safeIs = (ast: AST.AST) => {
  const is = Schema.is(schemaOf(ast))
  return (u: unknown): boolean => {
    try {
      return is(u)
    } catch {
      return false
    }
  }
}

/** Tries `arb` up to `tries` times for a value satisfying `pred`; the last try is kept either way. */
const bounded = <A>(arb: fc.Arbitrary<A>, pred: (a: A) => boolean, tries = 12): fc.Arbitrary<A> =>
  fc.array(arb, { minLength: tries, maxLength: tries }).map((xs) => xs.find(pred) ?? xs[xs.length - 1]!)

const STRING_SHAPES: ReadonlyArray<fc.Arbitrary<string>> = [
  fc.uuid(),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.tuple(fc.uuid(), fc.stringMatching(/^[a-z_]{1,12}$/), fc.stringMatching(/^[a-z-]{1,12}$/)).map((p) => p.join(":"))
]

type Constraint = Schema.Annotations.ToArbitrary.GenerationConstraint

/** A check effect's generators know how to aim at (every built-in check says how, in `arbitraryConstraint`). */
const isKnown = (check: AST.Check<unknown>): boolean =>
  check.annotations?.arbitraryConstraint !== undefined || (check._tag === "FilterGroup" && check.checks.every(isKnown))

const constraintsOf = (checks: ReadonlyArray<AST.Check<unknown>>): Array<Constraint> =>
  checks.flatMap((c) => [
    ...(c.annotations?.arbitraryConstraint !== undefined ? [c.annotations.arbitraryConstraint] : []),
    ...(c._tag === "FilterGroup" ? constraintsOf(c.checks) : [])
  ])

/** The tightest length bounds the constraints allow (`undefined`: none). */
const lengthBounds = (constraints: ReadonlyArray<Constraint>) => {
  const mins = constraints.flatMap((c) => [c.minLength, c.minCodePoints, c.minSize].filter((n): n is number => n !== undefined))
  const maxs = constraints.flatMap((c) => [c.maxLength, c.maxCodePoints, c.maxSize].filter((n): n is number => n !== undefined))
  return { min: mins.length > 0 ? Math.max(...mins) : undefined, max: maxs.length > 0 ? Math.min(...maxs) : undefined }
}

/**
 * effect's own generator for one node (it knows every built-in check: patterns, lengths,
 * bounds), as a fast-check arbitrary: fast-check draws the seed and the size, effect samples
 * with them. `undefined` when effect cannot derive or sample it.
 */
const effectArbitrary = (ast: AST.AST): fc.Arbitrary<unknown> | undefined => {
  try {
    const arb = Arbitrary.schema(schemaOf(ast))
    const sample = (seed: number, size: number) =>
      Effect.runSync(Effect.result(Arbitrary.sampleEffect(arb, { count: 1, seed, size })))
    if (Result.isFailure(sample(1, 10))) return undefined
    return fc.tuple(fc.integer({ min: 0, max: 0x7fffffff }), fc.integer({ min: 0, max: 20 })).map(([seed, size]) => {
      const result = sample(seed, size)
      return Result.isSuccess(result) ? result.success[0] : undefined
    })
  } catch {
    return undefined
  }
}

export interface ArbitraryOptions {
  readonly hints: Hints
  /** Strings of the world under test, offered to custom filters (e.g. a UUID check). */
  readonly strings: ReadonlyArray<string>
}

/** How deep a recursive (suspended) schema is unfolded before effect's generator takes over. */
const MAX_SUSPEND_DEPTH = 3

/**
 * Values of a schema's type side (`AST.toType`): the shapes (objects, arrays, unions) are walked
 * here so that hints can be mixed in by property name; checked leaves are effect's generators
 * (which honour every built-in check); custom filters are aimed at with candidates, bounded.
 */
export const arbitraryOf = (ast: AST.AST, options: ArbitraryOptions): fc.Arbitrary<unknown> => {
  const go = (ast: AST.AST, depth: number): fc.Arbitrary<unknown> => {
    const checks = ast.checks ?? []
    if (checks.length === 0) return shape(ast, [], depth)
    const custom = checks.filter((c) => !isKnown(c))
    const is = safeIs(ast)
    if (custom.length === 0) {
      if (ast._tag !== "Objects" && ast._tag !== "Arrays" && ast._tag !== "Union" && ast._tag !== "Suspend") {
        const native = effectArbitrary(ast)
        if (native !== undefined) return native
      }
      return bounded(shape(ast, constraintsOf(checks), depth), is)
    }
    // A custom predicate: aim at it with known strings and common id shapes, bounded.
    const known = checks.filter(isKnown)
    const rest = withChecks(ast, known)
    const arms: Array<fc.WeightedArbitrary<unknown>> = [{ weight: 1, arbitrary: bounded(go(rest, depth), is) }]
    const candidates = options.strings.filter(is)
    if (candidates.length > 0) arms.push({ weight: 3, arbitrary: fc.constantFrom(...candidates) })
    if (ast._tag === "String") {
      for (const s of STRING_SHAPES) {
        if (fc.sample(s, { numRuns: 5, seed: 1 }).some(is)) arms.push({ weight: 1, arbitrary: bounded(s as fc.Arbitrary<unknown>, is) })
      }
    }
    return fc.oneof(...arms)
  }

  /** The node's own shape, within the (known) constraints of its checks. */
  const shape = (ast: AST.AST, constraints: ReadonlyArray<Constraint>, depth: number): fc.Arbitrary<unknown> => {
    const { max, min } = lengthBounds(constraints)
    switch (ast._tag) {
      case "Objects": {
        const model: Record<string, fc.Arbitrary<unknown>> = {}
        const requiredKeys: Array<string> = []
        for (const ps of ast.propertySignatures) {
          const name = String(ps.name)
          const own = go(ps.type, depth)
          const pool = hintsFor(options.hints, name).filter(safeIs(ps.type))
          model[name] = pool.length > 0 ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...pool) }, { weight: 1, arbitrary: own }) : own
          if (!AST.isOptional(ps.type)) requiredKeys.push(name)
        }
        const record = fc.record(model, { requiredKeys })
        if (ast.indexSignatures.length === 0) return record
        const dictionaries = ast.indexSignatures.map((is) =>
          fc.dictionary(go(is.parameter, depth).map(String), go(is.type, depth), { maxKeys: 4 })
        )
        return fc.tuple(record, ...dictionaries).map(([fixed, ...dicts]) => Object.assign({}, ...dicts, fixed))
      }
      case "Arrays": {
        const fixed = ast.elements.map((e) => go(e, depth))
        const required = ast.elements.filter((e) => !AST.isOptional(e)).length
        const [item, ...post] = ast.rest
        const tail = post.map((e) => go(e, depth))
        const room = (n: number | undefined) => (n === undefined ? undefined : Math.max(0, n - ast.elements.length - tail.length))
        const items = item === undefined
          ? fc.constant([] as Array<unknown>)
          : fc.array(go(item, depth), {
            minLength: room(min) ?? 0,
            maxLength: Math.max(room(min) ?? 0, Math.min(room(max) ?? 5, 5))
          })
        return fc.tuple(fc.integer({ min: required, max: fixed.length }), fc.tuple(...fixed), items, fc.tuple(...tail))
          .map(([n, head, middle, end]) => [...head.slice(0, item === undefined ? n : fixed.length), ...middle, ...end])
      }
      case "Union":
        return ast.types.length === 0 ? fc.constant(undefined) : fc.oneof(...ast.types.map((t) => go(t, depth)))
      case "Suspend":
        return depth < MAX_SUSPEND_DEPTH ? go(ast.thunk(), depth + 1) : effectArbitrary(ast) ?? fc.constant(null)
      case "Literal":
        return fc.constant(ast.literal)
      case "Enum":
        return fc.constantFrom(...ast.enums.map(([, value]) => value))
      case "UniqueSymbol":
        return fc.constant(ast.symbol)
      case "Null":
        return fc.constant(null)
      case "Undefined":
      case "Void":
      case "Never":
        return fc.constant(undefined)
      case "Unknown":
      case "Any":
        return fc.jsonValue({ maxDepth: 2 })
      case "ObjectKeyword":
        return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 })
      case "Boolean":
        return fc.boolean()
      case "BigInt":
        return fc.bigInt()
      case "Symbol":
        return fc.string({ maxLength: 8 }).map((s) => Symbol.for(s))
      case "Number": {
        const integer = constraints.some((c) => c.number === "integer")
        const finite = integer || constraints.some((c) => c.number === "finite")
        const lo = constraints.flatMap((c) => (typeof c.minimum === "number" ? [c.minimum] : []))
        const hi = constraints.flatMap((c) => (typeof c.maximum === "number" ? [c.maximum] : []))
        const range = { min: lo.length > 0 ? Math.max(...lo) : undefined, max: hi.length > 0 ? Math.min(...hi) : undefined }
        return integer
          ? fc.integer({ min: Math.ceil(range.min ?? -(2 ** 31)), max: Math.floor(range.max ?? 2 ** 31) })
          : fc.double({
            ...(range.min !== undefined ? { min: range.min } : {}),
            ...(range.max !== undefined ? { max: range.max } : {}),
            noNaN: finite,
            noDefaultInfinity: finite
          })
      }
      case "String": {
        const pattern = constraints.flatMap((c) => c.patterns ?? [])[0]
        if (pattern !== undefined) {
          try {
            const arb = fc.stringMatching(new RegExp(pattern.source, pattern.flags))
            fc.sample(arb, { numRuns: 1, seed: 1 })
            return arb
          } catch {
            // a pattern fast-check cannot generate from (e.g. a lookahead): lengths only
          }
        }
        return fc.string({ minLength: min ?? 0, ...(max !== undefined ? { maxLength: Math.max(max, min ?? 0) } : {}) })
      }
      case "TemplateLiteral":
      case "Declaration":
        return effectArbitrary(withChecks(ast, [])) ?? fc.constant(undefined)
    }
  }

  return go(AST.toType(ast), 0)
}

/** Values of the schema's type, encoded for the wire (or as generated when they do not encode). */
export const encodedArbitrary = (schema: Schema.Top, options: ArbitraryOptions): fc.Arbitrary<unknown> => {
  // The API's request schemas encode without services.
  const encode = Schema.encodeUnknownResult(schema as Schema.Codec<unknown, unknown>)
  return arbitraryOf(schema.ast, options).map((value) => {
    try {
      return Result.getOrElse(encode(value), () => value)
    } catch {
      return value
    }
  })
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

export type Body =
  | { readonly kind: "json"; readonly value: unknown; readonly contentType?: string | undefined }
  | { readonly kind: "raw"; readonly bytes: Buffer; readonly contentType: string | undefined }

export interface RequestShape {
  readonly operation: Operation
  readonly method: string
  /** Path parameter values as they go on the wire (percent-encoded). */
  readonly path: Readonly<Record<string, string>>
  /** Query pairs as they go on the wire (percent-encoded). */
  readonly query: ReadonlyArray<readonly [string, string]>
  readonly headers: Readonly<Record<string, string>>
  readonly body: Body | undefined
  /** `valid`, or the mutations applied. */
  readonly label: string
}

/** Percent-encodes every UTF-16 unit; a lone surrogate becomes its 3-byte (WTF-8) form, as a hostile client may send. */
export const pct = (s: string): string => {
  let out = ""
  for (const ch of s) {
    if (/^[A-Za-z0-9\-._~]$/.test(ch)) {
      out += ch
      continue
    }
    const cp = ch.codePointAt(0)!
    const bytes = cp < 0x80
      ? [cp]
      : cp < 0x800
      ? [0xc0 | (cp >> 6), 0x80 | (cp & 63)]
      : cp < 0x10000
      ? [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)]
      : [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)]
    out += bytes.map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("")
  }
  return out
}

const toQueryPairs = (encoded: unknown): Array<readonly [string, string]> => {
  if (encoded === null || typeof encoded !== "object") return []
  return Object.entries(encoded as Record<string, unknown>).flatMap(([k, v]) =>
    v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((x) => [pct(k), pct(String(x))] as const)
  )
}

/** Header values Node will send: visible ASCII only. */
const headerSafe = (s: string) => s.replace(/[^\x20-\x7e]/g, "").trim()

export const bodyBytes = (body: Body): { readonly bytes: Buffer; readonly contentType: string | undefined } =>
  body.kind === "raw"
    ? { bytes: body.bytes, contentType: body.contentType }
    : body.value instanceof Uint8Array
    ? { bytes: Buffer.from(body.value), contentType: body.contentType ?? "application/octet-stream" }
    : { bytes: Buffer.from(JSON.stringify(body.value) ?? "", "utf8"), contentType: body.contentType ?? "application/json" }

/** Valid requests for one operation: every part generated from its schemas. */
export const validRequest = (operation: Operation, options: ArbitraryOptions): fc.Arbitrary<RequestShape> => {
  const part = (schema: Option.Option<Schema.Top>) =>
    Option.match(schema, { onNone: () => fc.constant(undefined as unknown), onSome: (s) => encodedArbitrary(s, options) })
  const payload = operation.payloads.length === 0
    ? fc.constant(undefined as Body | undefined)
    : fc.oneof(...operation.payloads.map(({ encoding, schema }) =>
      encodedArbitrary(schema, options).map((value): Body | undefined =>
        encoding._tag === "Json"
          ? { kind: "json", value, contentType: encoding.contentType }
          : encoding._tag === "Uint8Array"
          ? { kind: "raw", bytes: Buffer.from(value as Uint8Array), contentType: encoding.contentType }
          : encoding._tag === "Text"
          ? { kind: "raw", bytes: Buffer.from(String(value), "utf8"), contentType: encoding.contentType }
          : { kind: "raw", bytes: Buffer.from(new URLSearchParams(value as Record<string, string>).toString()), contentType: encoding.contentType }
      )
    ))
  return fc.record({
    path: part(operation.pathSchema),
    query: part(operation.urlParamsSchema),
    headers: part(operation.headersSchema),
    body: payload
  }).map(({ body, headers, path, query }) => ({
    operation,
    method: operation.method,
    path: Object.fromEntries(
      operation.pathParams.map((p) => [p, pct(String((path as Record<string, unknown> | undefined)?.[p] ?? ""))])
    ),
    query: toQueryPairs(query),
    headers: Object.fromEntries(
      Object.entries((headers ?? {}) as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k.toLowerCase(), headerSafe(String(v))])
    ),
    body,
    label: "valid"
  }))
}

// ---------------------------------------------------------------------------------------------
// Mutations
// ---------------------------------------------------------------------------------------------

/** Random choices a mutation may use, drawn by fast-check. */
export interface Dice {
  readonly n: number
  readonly m: number
  readonly word: string
  readonly json: unknown
}

const dice: fc.Arbitrary<Dice> = fc.record({
  n: fc.nat(),
  m: fc.nat(),
  word: fc.string({ minLength: 1, maxLength: 12 }),
  json: fc.jsonValue({ maxDepth: 3 })
})

const pick = <A>(xs: ReadonlyArray<A>, n: number): A => xs[n % xs.length]!

const isObject = (u: unknown): u is Record<string, unknown> => u !== null && typeof u === "object" && !Array.isArray(u)

/** An object copy whose key order is kept and to which `__proto__` can be added as an own key. */
const setOwn = (obj: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(obj)) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true })
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
  return out
}

/** Paths to every object inside a value, the value itself first. */
const objectPaths = (value: unknown, path: ReadonlyArray<string> = [], depth = 0): Array<ReadonlyArray<string>> => {
  if (!isObject(value) || depth > 6) return []
  return [path, ...Object.entries(value).flatMap(([k, v]) => objectPaths(v, [...path, k], depth + 1))]
}

/** Paths to every string-valued property inside a value. */
const stringPaths = (value: unknown, path: ReadonlyArray<string> = [], depth = 0): Array<ReadonlyArray<string>> => {
  if (!isObject(value) || depth > 6) return []
  return Object.entries(value).flatMap(([k, v]) =>
    typeof v === "string" ? [[...path, k]] : stringPaths(v, [...path, k], depth + 1)
  )
}

const updateAt = (value: unknown, path: ReadonlyArray<string>, f: (u: unknown) => unknown): unknown => {
  if (path.length === 0) return f(value)
  const [head, ...rest] = path
  const obj = value as Record<string, unknown>
  return setOwn(obj, head!, updateAt(obj[head!], rest, f))
}

const nested = (depth: number, open: string, close: string, leaf = "1") => open.repeat(depth) + leaf + close.repeat(depth)

const A_UUID = "0349944d-fb03-40cf-a73a-21b10c2a61e9"

/** Bad path values, already on the wire (some deliberately not valid percent-encoding). */
const BAD_PATH_VALUES: ReadonlyArray<(d: Dice, current: string) => string> = [
  () => "not-a-uuid",
  () => "123",
  (_, c) => `${c}0`,
  (_, c) => c.toUpperCase(),
  () => "00000000-0000-0000-0000-000000000000",
  () => "ffffffff-ffff-ffff-ffff-ffffffffffff",
  () => `%20${A_UUID}`,
  (_, c) => `${c}%00`,
  () => "%00",
  () => "..",
  () => "%2e%2e",
  () => "%2F",
  () => "a%2Fb",
  () => "%ED%A0%80", // a lone surrogate (U+D800) in WTF-8
  () => "%E0%A4%A", // truncated percent-encoding
  () => "%",
  () => "%zz",
  () => "%FF%FE", // not UTF-8
  () => "x".repeat(5000),
  (d) => `${A_UUID}${":step:slug".repeat(50 + (d.n % 1000))}`, // long composite task id
  (_, c) => `${c}:`,
  (_, c) => `${c}::`,
  (_, c) => `${c}:a`,
  () => "%3A",
  () => pct("😀"),
  () => "null",
  () => "__proto__",
  () => "constructor",
  (d) => pct(d.word)
]

const BAD_QUERY: ReadonlyArray<(d: Dice, q: ReadonlyArray<readonly [string, string]>) => Array<readonly [string, string]>> = [
  (d, q) => [...q, [pct(`x_${d.word}`), "1"]],
  (_, q) => [...q, ...q], // every parameter twice
  (_, q) => q.map(([k]) => [k, ""] as const),
  (_, q) => q.map(([k]) => [k, "x".repeat(10_000)] as const),
  (_, q) => q.map(([k]) => [k, "%00"] as const),
  (_, q) => q.map(([k]) => [k, "%ED%A0%80"] as const),
  (_, q) => q.map(([k]) => [k, "%E0%A4%A"] as const),
  (_, q) => [...q, ["__proto__", "x"], ["constructor", "y"]],
  (_, q) => q.map(([k, v]) => [`${k}%5B%5D`, v] as const),
  (_, q) => [...q, ...Array.from({ length: 1000 }, (_, i) => [`p${i}`, "1"] as const)],
  () => [] // every parameter dropped
]

const WRONG_TYPES: ReadonlyArray<unknown> = [1, -1, 0.5, 1e308, "s", "", true, false, null, [], {}, [1, "a"], { a: 1 }]

const CONTENT_TYPES = [
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=xyz",
  "application/xml",
  "application/json; charset=latin1",
  "application/octet-stream",
  "application/json; charset=utf-8",
  "APPLICATION/JSON",
  "application/vnd.api+json",
  "image/png",
  "text/html; charset=utf-8",
  "*/*",
  "application/jsonx",
  "json"
]

export type MutationName =
  | "drop-key"
  | "unknown-key"
  | "proto-key"
  | "constructor-key"
  | "wrong-type"
  | "huge-string"
  | "oversized-body"
  | "deep-nesting"
  | "deep-nesting-in-field"
  | "nul-string"
  | "lone-surrogate"
  | "bad-key-text"
  | "invalid-utf8"
  | "malformed-json"
  | "content-type"
  | "no-content-type"
  | "form-body"
  | "multipart-body"
  | "empty-body"
  | "non-object-body"
  | "duplicate-keys"
  | "number-edge"
  | "huge-array"
  | "bad-path-value"
  | "bad-query"
  | "bad-header"
  | "body-on-bodyless"

interface Mutation {
  readonly applies: (r: RequestShape) => boolean
  readonly apply: (r: RequestShape, d: Dice) => RequestShape
}

const jsonBody = (r: RequestShape): unknown => (r.body?.kind === "json" ? r.body.value : undefined)
const hasObjectBody = (r: RequestShape) => isObject(jsonBody(r))
const withJson = (r: RequestShape, value: unknown): RequestShape => ({ ...r, body: { kind: "json", value } })
const withRaw = (r: RequestShape, text: string | Buffer, contentType: string | undefined = "application/json"): RequestShape => ({
  ...r,
  body: { kind: "raw", bytes: typeof text === "string" ? Buffer.from(text, "utf8") : text, contentType }
})
const jsonText = (r: RequestShape) => (r.body === undefined ? "{}" : bodyBytes(r.body).bytes.toString("utf8"))
const takesBody = (r: RequestShape) => r.operation.payloads.length > 0

/** Sets a string somewhere in the body (an existing string field, else a new top-level key). */
const putString = (r: RequestShape, d: Dice, s: string): RequestShape => {
  const body = jsonBody(r)
  const paths = stringPaths(body)
  return paths.length > 0 ? withJson(r, updateAt(body, pick(paths, d.n), () => s)) : withJson(r, setOwn(body as any, "note", s))
}

export const MUTATIONS: Readonly<Record<MutationName, Mutation>> = {
  "drop-key": {
    applies: (r) => hasObjectBody(r) && Object.keys(jsonBody(r) as object).length > 0,
    apply: (r, d) => {
      const body = jsonBody(r) as Record<string, unknown>
      const key = pick(Object.keys(body), d.n)
      return withJson(r, Object.fromEntries(Object.entries(body).filter(([k]) => k !== key)))
    }
  },
  "unknown-key": {
    applies: hasObjectBody,
    apply: (r, d) => {
      const body = jsonBody(r)
      const at = pick(objectPaths(body), d.m)
      return withJson(r, updateAt(body, at, (o) => setOwn(o as any, `x_${d.word}`, d.json)))
    }
  },
  "proto-key": {
    applies: hasObjectBody,
    apply: (r, d) => {
      const body = jsonBody(r)
      const at = pick(objectPaths(body), d.m)
      const value = pick([{ polluted: true }, null, "x", [1], { __proto__: null }], d.n)
      return withJson(r, updateAt(body, at, (o) => setOwn(o as any, "__proto__", value)))
    }
  },
  "constructor-key": {
    applies: hasObjectBody,
    apply: (r, d) => {
      const body = jsonBody(r)
      const at = pick(objectPaths(body), d.m)
      const key = pick(["constructor", "prototype", "toString", "hasOwnProperty", "valueOf"], d.n)
      return withJson(r, updateAt(body, at, (o) => setOwn(o as any, key, pick([{ prototype: { polluted: true } }, 1, "x", null], d.n >> 3))))
    }
  },
  "wrong-type": {
    applies: hasObjectBody,
    apply: (r, d) => {
      const body = jsonBody(r) as Record<string, unknown>
      const keys = Object.keys(body)
      const key = keys.length > 0 ? pick(keys, d.n) : "x"
      const current = JSON.stringify(body[key])
      const others = WRONG_TYPES.filter((v) => JSON.stringify(v) !== current && typeof v !== typeof body[key])
      return withJson(r, setOwn(body, key, pick(others.length > 0 ? others : WRONG_TYPES, d.m)))
    }
  },
  "huge-string": {
    applies: hasObjectBody,
    apply: (r, d) => putString(r, d, pick(["x", "é", "😀"], d.m).repeat(pick([70_000, 300_000], d.n >> 4)))
  },
  "oversized-body": {
    applies: takesBody,
    // The size comes from the suite (its server's limit); without one the mutation is skipped.
    apply: (r, d) => withRaw(r, `{"x":"${"a".repeat(d.m)}"}`)
  },
  "deep-nesting": {
    applies: takesBody,
    apply: (r, d) => {
      const depth = pick([65, 1000, 100_000], d.n)
      return withRaw(r, d.m % 2 === 0 ? nested(depth, "[", "]") : nested(depth, '{"a":', "}"))
    }
  },
  "deep-nesting-in-field": {
    applies: hasObjectBody,
    apply: (r, d) => {
      const body = jsonBody(r) as Record<string, unknown>
      const keys = Object.keys(body)
      const key = keys.length > 0 ? pick(keys, d.n) : "x"
      const depth = pick([65, 1000, 100_000], d.m)
      const rest = JSON.stringify(Object.fromEntries(Object.entries(body).filter(([k]) => k !== key)))
      const deep = d.m % 2 === 0 ? nested(depth, "[", "]") : nested(depth, '{"a":', "}", "{}")
      return withRaw(r, `{${JSON.stringify(key)}:${deep}${rest === "{}" ? "}" : `,${rest.slice(1)}`}`)
    }
  },
  "nul-string": {
    applies: hasObjectBody,
    apply: (r, d) => putString(r, d, pick(["\u0000", "a\u0000b", `${A_UUID}\u0000`], d.m))
  },
  "lone-surrogate": {
    applies: hasObjectBody,
    apply: (r, d) => putString(r, d, pick(["\ud800", "a\udc00b", "\udbff", "\ude00\ud83d"], d.m))
  },
  "bad-key-text": {
    applies: hasObjectBody,
    apply: (r, d) => {
      const body = jsonBody(r)
      const at = pick(objectPaths(body), d.m)
      return withJson(r, updateAt(body, at, (o) => setOwn(o as any, pick(["a\u0000", "\ud800", "\u0000", "x\udfff"], d.n), 1)))
    }
  },
  "invalid-utf8": {
    applies: takesBody,
    apply: (r, d) => {
      const text = jsonText(r)
      const quote = text.indexOf('"', 1)
      const at = quote > 0 ? quote + 1 : 1
      const bad = pick([[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc0, 0xaf]], d.n)
      const bytes = Buffer.concat([Buffer.from(text.slice(0, at), "utf8"), Buffer.from(bad), Buffer.from(text.slice(at), "utf8")])
      return withRaw(r, bytes)
    }
  },
  "malformed-json": {
    applies: takesBody,
    apply: (r, d) => {
      const text = jsonText(r)
      return withRaw(r, pick([
        text.slice(0, Math.max(1, text.length - 1)),
        `${text}}`,
        `${text} trailing`,
        text.replace(/"/g, "'"),
        "{",
        "{\"a\":}",
        "{\"a\":01}",
        "{\"a\":NaN}",
        "\uFEFF" + text,
        "/* c */" + text,
        "undefined"
      ], d.n))
    }
  },
  "content-type": {
    applies: takesBody,
    apply: (r, d) => {
      const current = r.body === undefined ? { bytes: Buffer.from("{}"), contentType: undefined } : bodyBytes(r.body)
      return withRaw(r, current.bytes, pick(CONTENT_TYPES, d.n))
    }
  },
  "no-content-type": {
    applies: takesBody,
    apply: (r) => withRaw(r, r.body === undefined ? Buffer.from("{}") : bodyBytes(r.body).bytes, undefined)
  },
  "form-body": {
    applies: takesBody,
    apply: (r) => {
      const body = jsonBody(r)
      const form = isObject(body)
        ? new URLSearchParams(Object.entries(body).map(([k, v]): [string, string] => [k, typeof v === "string" ? v : JSON.stringify(v)])).toString()
        : "a=1"
      return withRaw(r, form, "application/x-www-form-urlencoded")
    }
  },
  "multipart-body": {
    applies: takesBody,
    apply: (r) => {
      const body = jsonBody(r)
      const parts = Object.entries(isObject(body) ? body : { a: 1 }).map(([k, v]) =>
        `--xyz\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${typeof v === "string" ? v : JSON.stringify(v)}\r\n`
      )
      return withRaw(r, `${parts.join("")}--xyz--\r\n`, "multipart/form-data; boundary=xyz")
    }
  },
  "empty-body": {
    applies: takesBody,
    apply: (r, d) =>
      withRaw(r, pick(["", " ", "\n"], d.n), pick(["application/json", undefined, "multipart/form-data; boundary=xyz", "application/x-www-form-urlencoded", "text/plain"], d.m))
  },
  "non-object-body": {
    applies: takesBody,
    apply: (r, d) => withRaw(r, pick(["[]", "[{}]", "\"str\"", "1", "null", "true", "-0", "1e999"], d.n))
  },
  "duplicate-keys": {
    applies: hasObjectBody,
    apply: (r, d) => {
      const text = jsonText(r)
      const body = jsonBody(r) as Record<string, unknown>
      const key = Object.keys(body).length > 0 ? pick(Object.keys(body), d.n) : "a"
      return withRaw(r, text === "{}" ? `{"a":1,"a":2}` : `${text.slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(d.json)}}`)
    }
  },
  "number-edge": {
    applies: hasObjectBody,
    apply: (r, d) => {
      const body = jsonBody(r) as Record<string, unknown>
      const keys = Object.keys(body)
      const key = keys.length > 0 ? pick(keys, d.n) : "x"
      const rest = JSON.stringify(Object.fromEntries(Object.entries(body).filter(([k]) => k !== key)))
      const literal = pick(["1e400", "-1e400", "-0", "1.0", "9007199254740993", "0.1e-400", "123456789012345678901234567890", "-1"], d.m)
      return withRaw(r, `{${JSON.stringify(key)}:${literal}${rest === "{}" ? "}" : `,${rest.slice(1)}`}`)
    }
  },
  "huge-array": {
    applies: hasObjectBody,
    apply: (r, d) => {
      const body = jsonBody(r) as Record<string, unknown>
      const arrays = Object.keys(body).filter((k) => Array.isArray(body[k]))
      const key = arrays.length > 0 ? pick(arrays, d.n) : pick([...Object.keys(body), "x"], d.n)
      const item = Array.isArray(body[key]) && (body[key] as Array<unknown>).length > 0 ? (body[key] as Array<unknown>)[0] : 0
      return withJson(r, setOwn(body, key, Array.from({ length: 10_001 + (d.m % 3) * 5000 }, () => item)))
    }
  },
  "bad-path-value": {
    applies: (r) => r.operation.pathParams.length > 0,
    apply: (r, d) => {
      const name = pick(r.operation.pathParams, d.n)
      return { ...r, path: { ...r.path, [name]: pick(BAD_PATH_VALUES, d.m)(d, r.path[name] ?? "") } }
    }
  },
  "bad-query": {
    applies: () => true,
    apply: (r, d) => ({ ...r, query: pick(BAD_QUERY, d.n)(d, r.query) })
  },
  "bad-header": {
    applies: (r) => Option.isSome(r.operation.headersSchema),
    apply: (r, d) => {
      const names = Object.keys(r.headers)
      if (names.length === 0) return { ...r, headers: { ...r.headers, [pct(d.word).toLowerCase() || "x-y"]: "1" } }
      const name = pick(names, d.n)
      const value = pick(["", "wrong", "x".repeat(8000), `${r.headers[name]} `, `${r.headers[name]}x`, undefined], d.m)
      const headers = { ...r.headers }
      if (value === undefined) delete headers[name]
      else headers[name] = value
      return { ...r, headers }
    }
  },
  "body-on-bodyless": {
    applies: (r) => !takesBody(r),
    apply: (r, d) => withRaw(r, pick(["{\"a\":1}", nested(100_000, "[", "]"), "not json"], d.n), pick(["application/json", "text/plain"], d.m))
  }
}

/** A request with one or two mutations applied (only mutations that apply to the operation). */
export const mutatedRequest = (
  valid: fc.Arbitrary<RequestShape>,
  options: { readonly oversizedBytes?: number | undefined }
): fc.Arbitrary<RequestShape> =>
  fc.tuple(valid, fc.array(fc.tuple(fc.constantFrom(...(Object.keys(MUTATIONS) as Array<MutationName>)), dice), { minLength: 1, maxLength: 2 }))
    .map(([request, steps]) => {
      let r = request
      const applied: Array<string> = []
      for (const [name, d] of steps) {
        const m = MUTATIONS[name]
        if (!m.applies(r)) continue
        if (name === "oversized-body") {
          if (options.oversizedBytes === undefined) continue
          r = m.apply(r, { ...d, m: options.oversizedBytes })
        } else r = m.apply(r, d)
        applied.push(name)
      }
      return { ...r, label: applied.length === 0 ? "valid" : applied.join("+") }
    })

/** Valid and mutated requests for one operation, about one valid in three. */
export const requestsFor = (
  operation: Operation,
  options: ArbitraryOptions & { readonly oversizedBytes?: number | undefined }
): fc.Arbitrary<RequestShape> => {
  const valid = validRequest(operation, options)
  return fc.oneof(
    { weight: 1, arbitrary: valid },
    { weight: 2, arbitrary: mutatedRequest(valid, { oversizedBytes: options.oversizedBytes }) }
  )
}
