/**
 * Schema failures as `{path, message}` problems in the wording our 400s and CLI messages have
 * always used (Effect 3's): `Expected <type>, actual <value>`, `is missing`, `is unexpected`.
 * Effect 4's formatter says `got` for `actual`, `Missing key` and `Unexpected key with value ...`;
 * custom messages (a filter's `message`, `closed`'s `messageUnexpectedKey`) pass unchanged.
 * The value is quoted only when the decode ran with `reportInput: true` (PARSE_OPTIONS).
 */
import * as SchemaIssue from "effect/SchemaIssue"

export interface Problem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const leafHook: SchemaIssue.LeafHook = (issue) => {
  const message = SchemaIssue.defaultLeafHook(issue)
  switch (issue._tag) {
    case "MissingKey":
      return message === "Missing key" ? "is missing" : message
    case "UnexpectedKey":
      return message === "Expected no excess property" || message.startsWith("Unexpected key with value ")
        ? "is unexpected"
        : message
    default:
      return message
  }
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1({ leafHook })

const EXPECTED_GOT = /^Expected ([\s\S]*?), got ([\s\S]*)$/

/** Every problem of `issue`, each with its path. */
export const issueProblems = (issue: SchemaIssue.Issue): ReadonlyArray<Problem> =>
  formatter(issue).issues.map((i) => ({
    path: (i.path ?? []).map((p) => (typeof p === "object" && p !== null && "key" in p ? p.key : p)),
    message: i.message.replace(EXPECTED_GOT, "Expected $1, actual $2")
  }))
