/**
 * What a JSON value must satisfy before anything decodes or stores it (the rules are listed in
 * src/http/input/jsonInput.ts, which applies them to every request body; schemas that parse JSON out
 * of a string apply them too). Pure, so that the contract can use it.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { inexactNumberProblem } from "./jsonNumbers.js"
import { parseJson } from "./jsonParse.js"

export const DEFAULT_MAX_JSON_DEPTH = 64

/** `a.b[3].c`, quoting keys that are not plain identifiers. */
const pathOf = (segments: ReadonlyArray<string | number>): string =>
  segments.length === 0
    ? "body"
    : segments.map((s, i) =>
      typeof s === "number"
        ? `[${s}]`
        : /^[A-Za-z_$][\w$]*$/.test(s)
        ? (i === 0 ? s : `.${s}`)
        : `[${JSON.stringify(s.length > 32 ? `${s.slice(0, 32)}…` : s)}]`
    ).join("")

// In a `u` regex a surrogate pair is one code point, so this class matches unpaired halves only.
const UNPAIRED_SURROGATE = /[\uD800-\uDFFF]/u

// Any NUL or surrogate code unit at all: most text has none, and one test of this says so (the
// precise tests below run only then: 8,000 events of 100 keys, 0.8 M keys and strings).
const SUSPECT = /[\u0000\uD800-\uDFFF]/

/** Why a string cannot be stored exactly, or undefined. */
export const textProblem = (s: string): string | undefined =>
  !SUSPECT.test(s)
    ? undefined
    : s.includes("\u0000")
    ? "contains a NUL character (U+0000), which cannot be stored"
    : UNPAIRED_SURROGATE.test(s)
    ? "contains an unpaired UTF-16 surrogate (not valid Unicode text)"
    : undefined

interface Frame {
  readonly value: unknown
  readonly depth: number
  readonly parent: Frame | undefined
  readonly key: string | number | undefined
}

const framePath = (frame: Frame | undefined, last?: string | number): string => {
  const segments: Array<string | number> = last === undefined ? [] : [last]
  for (let f = frame; f !== undefined && f.key !== undefined; f = f.parent) segments.unshift(f.key)
  return pathOf(segments)
}

/**
 * The first problem in a parsed JSON value, walked with an explicit stack (no recursion, so
 * any depth is safe to inspect), or undefined when it is acceptable. `texts: false` skips the
 * strings' and keys' own tests, for a value whose text is known to hold no NUL and no unpaired
 * surrogate (src/http/input/jsonInput.ts: a body without a `\u` escape).
 */
export const jsonValueProblem = (value: unknown, maxDepth: number, texts = true): string | undefined => {
  const stack: Array<Frame> = [{ value, depth: 0, parent: undefined, key: undefined }]
  const needsFrame = texts ? mayHaveProblem : isContainer
  while (stack.length > 0) {
    const frame = stack.pop()!
    const v = frame.value
    if (typeof v === "string") {
      const problem = textProblem(v)
      if (problem !== undefined) return `${framePath(frame)}: ${problem}`
      continue
    }
    if (v === null || typeof v !== "object") continue
    if (frame.depth >= maxDepth) {
      return `${framePath(frame)}: JSON nesting deeper than ${maxDepth} levels (the limit, SVC_MAX_JSON_DEPTH)`
    }
    const depth = frame.depth + 1
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        const child = v[i]
        if (needsFrame(child)) stack.push({ value: child, depth, parent: frame, key: i })
      }
      continue
    }
    for (const key of Object.keys(v)) {
      if (key === "__proto__") return `${framePath(frame, key)}: the key "__proto__" is not allowed`
      const problem = texts ? textProblem(key) : undefined
      if (problem !== undefined) return `${framePath(frame, key)}: the key ${problem}`
      const child = (v as Record<string, unknown>)[key]
      if (needsFrame(child)) stack.push({ value: child, depth, parent: frame, key })
    }
  }
  return undefined
}

/**
 * Whether a value needs its own turn on the stack: an object or array, or a string with a
 * problem (reported when its turn comes, so the first problem named is the same). Numbers,
 * booleans, null and good strings, most of a body, make no frame.
 */
const mayHaveProblem = (v: unknown): boolean =>
  typeof v === "object" ? v !== null : typeof v === "string" && textProblem(v) !== undefined

const isContainer = (v: unknown): boolean => typeof v === "object" && v !== null

/** The first value (depth first, in key order) that `found` picks, with its path. */
export const firstWhere = (
  value: unknown,
  found: (v: unknown) => boolean
): { readonly path: string; readonly value: unknown } | undefined => {
  const stack: Array<Frame> = [{ value, depth: 0, parent: undefined, key: undefined }]
  while (stack.length > 0) {
    const frame = stack.pop()!
    const v = frame.value
    if (found(v)) return { path: framePath(frame), value: v }
    if (v === null || typeof v !== "object") continue
    const depth = frame.depth + 1
    const keys: ReadonlyArray<string | number> = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v)
    for (let i = keys.length - 1; i >= 0; i--) {
      stack.push({ value: (v as Record<string | number, unknown>)[keys[i]!], depth, parent: frame, key: keys[i] })
    }
  }
  return undefined
}

/**
 * `Schema.fromJsonString(schema)` with the same rules as a request body (depth, `__proto__`,
 * text): for JSON carried inside a string, e.g. a query parameter.
 */
export const CheckedJson = <S extends Schema.Top>(schema: S, maxDepth = DEFAULT_MAX_JSON_DEPTH) =>
  Schema.String.pipe(
    Schema.decodeTo(
      schema,
      SchemaTransformation.transformEffect<S["Encoded"], string>({
        decode: (text) => {
          let value: unknown
          try {
            value = parseJson(text)
          } catch {
            return Effect.fail(new SchemaIssue.InvalidValue({ message: "must be valid JSON" }, text))
          }
          const problem = jsonValueProblem(value, maxDepth) ?? inexactNumberProblem(text, firstWhere)
          return problem === undefined
            // Checked by `schema`'s own decode, which follows.
            ? Effect.succeed(value as S["Encoded"])
            : Effect.fail(new SchemaIssue.InvalidValue({ message: problem }, text))
        },
        encode: (value) => Effect.succeed(JSON.stringify(value))
      })
    )
  )
