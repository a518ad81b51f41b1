/**
 * Schema failures as `{path, message}` problems in the wording our 400s and CLI messages have
 * always used (Effect 3's): `Expected <type>, actual <value>`, `is missing`, `is unexpected`, and
 * the checks' own words (`a string at most 10 character(s) long`, `a number between 1 and 500`).
 * Effect 4's formatter says `got` for `actual`, `Missing key`, `Unexpected key with value ...`
 * and `a value with a length of at most 10`; custom messages (a filter's `message`, `closed`'s
 * `messageUnexpectedKey`) pass unchanged.
 * The value is quoted only when the decode ran with `reportInput: true` (PARSE_OPTIONS).
 */
import { format } from "effect/Formatter"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"

export interface Problem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** The type a checked primitive's wrong-type input was expected to be, as Effect 3 named it. */
const PRIMITIVE: Partial<Record<SchemaAST.AST["_tag"], string>> = {
  String: "string",
  Number: "number",
  Boolean: "boolean",
  BigInt: "bigint"
}

export const leafHook: SchemaIssue.LeafHook = (issue) => {
  const message = SchemaIssue.defaultLeafHook(issue)
  switch (issue._tag) {
    case "MissingKey":
      return message === "Missing key" ? "is missing" : message
    case "UnexpectedKey": {
      if (message !== "Expected no excess property" && !message.startsWith("Unexpected key with value ")) return message
      // A struct with checks keeps its annotations (`closed`'s message) on its last check, where
      // Effect 4's formatter does not look for an unexpected key's message.
      const own = SchemaAST.resolveAt<string>("messageUnexpectedKey")(issue.ast)
      return typeof own === "string" ? own : "is unexpected"
    }
    case "InvalidType": {
      // Effect 4 names a checked primitive by its identifier (`Expected Uuid`); Effect 3 by the
      // type the input failed to be (`Expected string`), which is what a client can act on.
      const base = PRIMITIVE[issue.ast._tag]
      const id = SchemaAST.resolveIdentifier(issue.ast)
      if (base === undefined || id === undefined || !message.startsWith(`Expected ${id}`)) return message
      return SchemaIssue.hasInput(issue) ? `Expected ${base}, got ${format(issue.input)}` : `Expected ${base}`
    }
    default:
      return message
  }
}

/** A built-in check's Effect 4 expectation in Effect 3's words; anything else unchanged. */
const oldExpected = (expected: string, input: unknown): string => {
  const what = Array.isArray(input) ? "array" : typeof input === "string" || input === undefined ? "string" : undefined
  let m = /^a value with a length of (at most|at least) (\d+)$/.exec(expected)
  if (m !== null && what !== undefined) {
    return what === "string" ? `a string ${m[1]} ${m[2]} character(s) long` : `an array of ${m[1]} ${m[2]} item(s)`
  }
  m = /^a value (greater than or equal to|greater than|less than or equal to|less than) (\S+)$/.exec(expected)
  if (m !== null) {
    if (m[2] === "0") {
      const zero: Record<string, string> = {
        "greater than or equal to": "a non-negative number",
        "greater than": "a positive number",
        "less than or equal to": "a non-positive number",
        "less than": "a negative number"
      }
      return zero[m[1]!]!
    }
    return `a number ${m[1]} ${m[2]}`
  }
  m = /^a value between (\S+) and (\S+)$/.exec(expected)
  if (m !== null) return `a number between ${m[1]} and ${m[2]}`
  m = /^a string matching the RegExp ([\s\S]*)$/.exec(expected)
  if (m !== null) return `a string matching the pattern ${m[1]}`
  return expected
}

/**
 * A failed check without a message of its own, in Effect 3's words (see `oldExpected`); undefined
 * leaves it to the formatter (a custom message, or an inner issue with its own expectation).
 */
export const checkHook: SchemaIssue.CheckHook = (issue) => {
  const own = SchemaIssue.defaultCheckHook(issue)
  if (own !== undefined) return own
  const inner = issue.issue
  if (inner._tag !== "InvalidValue" || typeof inner.annotations?.expected === "string") return undefined
  const expected = issue.filter.annotations?.expected
  if (typeof expected !== "string") return undefined
  const input = SchemaIssue.hasInput(issue) ? issue.input : undefined
  const words = oldExpected(expected, input)
  return SchemaIssue.hasInput(issue) ? `Expected ${words}, got ${format(input)}` : `Expected ${words}`
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1({ leafHook, checkHook })

const EXPECTED_GOT = /^Expected ([\s\S]*?), got ([\s\S]*)$/

/** Every problem of `issue`, each with its path. */
export const issueProblems = (issue: SchemaIssue.Issue): ReadonlyArray<Problem> =>
  formatter(issue).issues.map((i) => ({
    path: (i.path ?? []).map((p) => (typeof p === "object" && p !== null && "key" in p ? p.key : p)),
    message: i.message.replace(EXPECTED_GOT, "Expected $1, actual $2")
  }))
