/**
 * `tasks start --param key=value`: builds the start context and checks it against the
 * workflow's startParams (from the workflows list) before anything is sent, so a typo or a
 * bad value gets a message naming the parameter and what it takes.
 */
import type { StartParam, WorkflowEntry } from "../api/resources.js"

export interface ParsedParam {
  readonly key: string
  readonly raw: string
  readonly value: unknown
  /** The value's JSON held a number the parse changed (src/api/jsonNumbers.ts): what to say of it. */
  readonly inexact?: string
}

/** The first given parameter whose value the JSON reading changed, as a usage message. */
export const inexactParam = (given: ReadonlyArray<ParsedParam>): string | undefined => {
  const p = given.find((q) => q.inexact !== undefined)
  return p === undefined ? undefined : `--param ${p.key}: ${p.inexact}`
}

const typeOf = (value: unknown) => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value)

/** `period (string, required, pattern ^\d{4}-...$): Accounting period` */
export const describeParam = (p: StartParam): string => {
  const facts: Array<string> = [p.type, p.required ? "required" : `default ${JSON.stringify(p.default)}`]
  if (p.enum !== undefined) facts.push(`one of ${p.enum.map((v) => JSON.stringify(v)).join(" | ")}`)
  if (p.pattern !== undefined) facts.push(`pattern ${p.pattern}`)
  return `${p.key} (${facts.join(", ")})${p.description !== undefined ? `: ${p.description}` : ""}`
}

export const describeParams = (params: ReadonlyArray<StartParam>): string =>
  params.length === 0 ? "  (no parameters)" : params.map((p) => `  --param ${describeParam(p)}`).join("\n")

/** One-line summary for the workflows table: `period*:string threshold:number=75`. */
export const summarizeParams = (params: ReadonlyArray<StartParam> | undefined): string =>
  params === undefined
    ? "(unknown)"
    : params.length === 0
    ? "-"
    : params.map((p) => `${p.key}${p.required ? "*" : ""}:${p.type}${p.required ? "" : `=${JSON.stringify(p.default)}`}`).join(" ")

export const unknownWorkflowMessage = (workflowId: string, entityId: string, workflows: ReadonlyArray<WorkflowEntry>) =>
  `unknown workflow "${workflowId}" for entity ${entityId}. Workflows it can start:\n` +
  (workflows.length === 0 ? "  (none)" : workflows.map((w) => `  ${w.id.padEnd(Math.max(...workflows.map((x) => x.id.length)))}  ${w.name}`).join("\n"))

/**
 * The context to send, or the problems found. A string-typed parameter keeps the text as given
 * (`--param accountId=1000` is "1000", not 1000); other types take the JSON reading.
 */
export const buildContext = (
  workflow: WorkflowEntry,
  given: ReadonlyArray<ParsedParam>
): { readonly ok: true; readonly context: Record<string, unknown> } | { readonly ok: false; readonly message: string } => {
  const params = workflow.startParams
  if (params === undefined) {
    // The runbook lookup failed: nothing to check against; send what was given.
    const inexact = inexactParam(given)
    if (inexact !== undefined) return { ok: false, message: inexact }
    return { ok: true, context: Object.fromEntries(given.map((p) => [p.key, p.value])) }
  }
  const problems: Array<string> = []
  const context: Record<string, unknown> = {}
  for (const p of given) {
    const param = params.find((q) => q.key === p.key)
    if (param === undefined) {
      problems.push(`unknown parameter "${p.key}"`)
      continue
    }
    const value = param.type === "string" && typeof p.value !== "string" ? p.raw : p.value
    if (value !== p.raw && p.inexact !== undefined) {
      problems.push(`--param ${p.key}: ${p.inexact}`)
      continue
    }
    const actual = typeOf(value)
    if (actual !== param.type) {
      problems.push(`--param ${p.key}: expected ${param.type === "array" || param.type === "object" ? `a JSON ${param.type}` : `a ${param.type}`}, got ${actual} ${JSON.stringify(p.raw)}`)
      continue
    }
    if (param.pattern !== undefined && typeof value === "string") {
      let re: RegExp | undefined
      try {
        re = new RegExp(param.pattern, "u")
      } catch {
        re = undefined
      }
      if (re !== undefined && !re.test(value)) {
        problems.push(`--param ${p.key}: "${value}" does not match the pattern ${param.pattern}${param.description !== undefined ? ` (${param.description})` : ""}`)
        continue
      }
    }
    if (param.enum !== undefined && !param.enum.some((allowed) => JSON.stringify(allowed) === JSON.stringify(value))) {
      problems.push(`--param ${p.key}: ${JSON.stringify(value)} is not one of ${param.enum.map((v) => JSON.stringify(v)).join(", ")}`)
      continue
    }
    context[p.key] = value
  }
  const missing = params.filter((q) => q.required && !given.some((p) => p.key === q.key))
  for (const q of missing) problems.push(`missing required parameter "${q.key}": pass --param ${q.key}=<${q.type}>`)
  if (problems.length > 0) {
    return {
      ok: false,
      message: `workflow "${workflow.id}" cannot start with these parameters:\n` +
        problems.map((s) => `  - ${s}`).join("\n") +
        `\nIt takes:\n${describeParams(params)}`
    }
  }
  return { ok: true, context }
}
