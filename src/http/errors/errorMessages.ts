/**
 * The words of an error message, bounded: a value the client sent is quoted at most once per
 * problem and at most MAX_QUOTED_CHARS characters long (then `…`); a decode error lists at most
 * MAX_LISTED_ISSUES problems ("and K more"), each field path once; any message is cut at
 * MAX_MESSAGE_CHARS. errorResponse.ts puts them in the spec's error body.
 */
import * as Schema from "effect/Schema"
import type * as SchemaIssue from "effect/SchemaIssue"
import { issueProblems } from "../../api/issues.js"
import { clip, MAX_QUOTED_CHARS } from "../../lib/quoted.js"

/** Problems listed in one decode-error message; the rest are counted. */
export const MAX_LISTED_ISSUES = 10
/** Characters of one listed problem (its field path and what was wrong). */
export const MAX_ISSUE_CHARS = 300
/** Characters of any error message. */
export const MAX_MESSAGE_CHARS = 4096

/** The inside of a JSON string literal cut to `max` characters, never inside an escape sequence. */
const clipJsonInner = (inner: string, max: number): string => {
  if (inner.length <= max) return inner
  let cut = inner.slice(0, max)
  // A trailing backslash run of odd length starts an escape that the cut broke.
  const run = /\\+$/.exec(cut)?.[0].length ?? 0
  if (run % 2 === 1) cut = cut.slice(0, -1)
  else {
    const unicode = /\\u[0-9a-fA-F]{0,3}$/.exec(cut)
    if (unicode !== null && ((/\\*$/.exec(cut.slice(0, unicode.index))?.[0].length ?? 0) % 2 === 0)) {
      cut = cut.slice(0, unicode.index)
    }
  }
  const last = cut.charCodeAt(cut.length - 1)
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1)
  return `${cut}…`
}

/**
 * Every double-quoted string in `message` (how the schema formatter and our own messages quote
 * values) cut to MAX_QUOTED_CHARS. One linear scan: a quote left open (a message that was cut)
 * runs to the end and is cut the same way.
 */
const clipQuotedStrings = (message: string): string => {
  let out = ""
  let from = 0
  for (;;) {
    const open = message.indexOf("\"", from)
    if (open === -1) return out + message.slice(from)
    out += message.slice(from, open + 1)
    let close = open + 1
    while (close < message.length && message.charCodeAt(close) !== 34) close += message.charCodeAt(close) === 92 ? 2 : 1
    const inner = message.slice(open + 1, Math.min(close, message.length))
    const clipped = inner.length > MAX_QUOTED_CHARS ? clipJsonInner(inner, MAX_QUOTED_CHARS) : inner
    if (close >= message.length) return out + clipped
    out += `${clipped}"`
    from = close + 1
  }
}

/** Any message as it may leave: quoted values cut, the whole bounded. */
export const boundMessage = (message: string): string =>
  clip(clipQuotedStrings(message), MAX_MESSAGE_CHARS)

/** A value as the schema formatter printed it (`"text"`, `123`, `{"a":1}`), cut to MAX_QUOTED_CHARS. */
const clipActual = (actual: string): string =>
  actual.startsWith("\"") && actual.endsWith("\"") && actual.length >= 2
    ? `"${clipJsonInner(actual.slice(1, -1), MAX_QUOTED_CHARS)}"`
    : clip(actual, MAX_QUOTED_CHARS)

interface Problem {
  readonly path: string
  /** What was expected, when the formatter said `Expected <x>, actual <v>`. */
  readonly expected: Array<string>
  readonly actual: string | undefined
  /** Any other message (`is missing`, a refinement's own message, ...). */
  readonly other: string | undefined
}

/** One issue as Schema's formatter gives it: where, and what is wrong. */
interface IssueLine {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** Schema's problems in the words the API has always used (see `issueProblems`). */
const issueLines = (issue: SchemaIssue.Issue): ReadonlyArray<IssueLine> => issueProblems(issue)

/**
 * One line per field path (and value): the formatter reports a union once per member (a
 * literal union, or `T | undefined` for every optional field), each with the whole value; they
 * become one `Expected A | B, actual <value>` with the value quoted once, cut short. `undefined`
 * is dropped from the alternatives: JSON cannot send it.
 */
const problemsOf = (issues: ReadonlyArray<IssueLine>): Array<Problem> => {
  const problems: Array<Problem> = []
  const byKey = new Map<string, Problem>()
  for (const issue of issues) {
    const path = issue.path.length === 0
      ? "request"
      : issue.path.map((segment) => clip(String(segment), MAX_QUOTED_CHARS)).join(".")
    const message = issue.message
    const at = message.startsWith("Expected ") ? message.indexOf(", actual ") : -1
    if (at === -1) {
      const other = clipQuotedStrings(message)
      const key = `${path}\u0000\u0001${other}`
      if (!byKey.has(key)) {
        const problem = { path, expected: [], actual: undefined, other }
        byKey.set(key, problem)
        problems.push(problem)
      }
      continue
    }
    const expected = clip(message.slice("Expected ".length, at), MAX_ISSUE_CHARS)
    const actual = clipActual(message.slice(at + ", actual ".length))
    const key = `${path}\u0000${actual}`
    const known = byKey.get(key)
    if (known !== undefined) {
      if (!known.expected.includes(expected)) known.expected.push(expected)
      continue
    }
    const problem = { path, expected: [expected], actual, other: undefined }
    byKey.set(key, problem)
    problems.push(problem)
  }
  return problems
}

const describeProblem = (p: Problem): string => {
  if (p.other !== undefined) return clip(`${p.path}: ${p.other}`, MAX_ISSUE_CHARS)
  const named = p.expected.flatMap((e) => e.split(" | "))
  const alternatives = named.length > 1 ? named.filter((e) => e !== "undefined") : named
  return clip(`${p.path}: Expected ${alternatives.join(" | ")}, actual ${p.actual}`, MAX_ISSUE_CHARS)
}

/**
 * At most this many of an error's issues are formatted; the rest are only counted (as issues: the
 * members of a union of several schemas may report one problem each, which the formatted ones
 * merge). A body of half a million unknown keys (within SVC_MAX_JSON_ITEMS) took 2-3 s to format,
 * for a message that lists MAX_LISTED_ISSUES of them.
 */
const MAX_FORMATTED_ISSUES = 1_000

/** The issues under `issue` that hold no other (what the formatter lists). */
const leafCount = (issue: SchemaIssue.Issue): number => {
  let n = 0
  const stack: Array<SchemaIssue.Issue> = [issue]
  while (stack.length > 0) {
    const next = stack.pop()!
    if (next._tag === "Composite" || next._tag === "AnyOf") stack.push(...next.issues)
    else if (next._tag === "Pointer" || next._tag === "Filter" || next._tag === "Encoding") stack.push(next.issue)
    else n++
  }
  return n
}

/**
 * `issue` with at most `budget.left` of its leaf issues kept (composites and unions cut short, the
 * same issue objects otherwise); `budget.omitted` counts what was cut.
 */
const capped = (issue: SchemaIssue.Issue, budget: { left: number; omitted: number }): SchemaIssue.Issue => {
  if (issue._tag === "Pointer" || issue._tag === "Filter" || issue._tag === "Encoding") {
    const inner = capped(issue.issue, budget)
    return inner === issue.issue ? issue : Object.create(issue, { issue: { value: inner } })
  }
  if (issue._tag !== "Composite" && issue._tag !== "AnyOf") {
    budget.left--
    return issue
  }
  const kept: Array<SchemaIssue.Issue> = []
  for (const child of issue.issues) {
    if (budget.left > 0) kept.push(capped(child, budget))
    else budget.omitted += leafCount(child)
  }
  return kept.length === issue.issues.length && kept.every((k, i) => k === issue.issues[i])
    ? issue
    : Object.create(issue, { issues: { value: kept } })
}

/** A decode error (or its issue) as one bounded message naming each field path once. */
export const describeIssues = (e: Schema.SchemaError | SchemaIssue.Issue): string => {
  const budget = { left: MAX_FORMATTED_ISSUES, omitted: 0 }
  const issues = issueLines(capped(Schema.isSchemaError(e) ? e.issue : e, budget))
  if (issues.length === 0) return boundMessage(String(e))
  const lines = problemsOf(issues).map(describeProblem)
  const listed = lines.slice(0, MAX_LISTED_ISSUES).join("; ")
  const rest = lines.length - MAX_LISTED_ISSUES + budget.omitted
  return boundMessage(rest > 0 ? `${listed}; and ${rest} more` : listed)
}
