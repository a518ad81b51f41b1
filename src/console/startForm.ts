/**
 * The start-task form's model: one input per startParam, its text turned into the typed value,
 * checked by the same rule the gateway applies (src/services/startParams.ts `problem`) before
 * anything is sent. Pure, so a test can drive it without a browser.
 */
import type { StartParam, TaskSummary } from "../api/resources.js"
import { problem } from "../services/startParams.js"
import { patternFormat } from "./words.js"

/** What an input holds: text for strings, numbers and JSON; a flag for booleans; an index for enums. */
export type Draft = Record<string, string | boolean>

const isEnum = (p: StartParam) => p.enum !== undefined && p.enum.length > 0

export const initialDraft = (params: ReadonlyArray<StartParam>): Draft =>
  Object.fromEntries(params.map((p) => {
    const d = p.default
    if (isEnum(p)) {
      const at = d === undefined ? -1 : p.enum!.findIndex((v) => JSON.stringify(v) === JSON.stringify(d))
      return [p.key, at < 0 ? "" : String(at)]
    }
    if (p.type === "boolean") return [p.key, d === true]
    if (d === undefined || d === null) return [p.key, ""]
    return [p.key, p.type === "array" || p.type === "object" ? JSON.stringify(d) : String(d)]
  }))

export type Parsed = { readonly context: Record<string, unknown>; readonly errors: Record<string, string> }

/** The context to send and the problems per key (empty when it may be sent). */
export const parseDraft = (params: ReadonlyArray<StartParam>, draft: Draft): Parsed => {
  const context: Record<string, unknown> = {}
  const errors: Record<string, string> = {}
  for (const p of params) {
    const raw = draft[p.key]
    let value: unknown
    if (isEnum(p)) value = raw === "" || raw === undefined ? undefined : p.enum![Number(raw)]
    else if (p.type === "boolean") value = raw === true
    else if (typeof raw !== "string" || raw.trim() === "") value = undefined
    else if (p.type === "number") {
      value = Number(raw)
      if (!Number.isFinite(value)) {
        errors[p.key] = "must be a number"
        continue
      }
    } else if (p.type === "array" || p.type === "object") {
      try {
        value = JSON.parse(raw)
      } catch {
        errors[p.key] = `must be JSON (${p.type === "array" ? "[...]" : "{...}"})`
        continue
      }
    } else value = raw
    if (value === undefined) {
      if (p.required) errors[p.key] = "is required"
      continue
    }
    const issue = problem(p, value)
    if (issue !== undefined) errors[p.key] = issue
    else context[p.key] = value
  }
  return { context, errors }
}

/** The format hint of a parameter: its description, else the format its pattern asks for. */
export const hintOf = (param: StartParam): string | undefined => {
  if (param.description !== undefined) return param.description
  const format = param.pattern !== undefined ? patternFormat(param.pattern) : undefined
  return format !== undefined ? `Format: ${format}` : undefined
}

/** A check's message in words: a pattern mismatch says the format rather than the expression. */
export const errorWords = (param: StartParam, message: string): string => {
  if (param.pattern === undefined || !message.includes(param.pattern)) return message
  const format = patternFormat(param.pattern)
  if (/^must match the pattern/.test(message)) {
    return format !== undefined
      ? `must look like ${format}`
      : `is not in the expected format${param.description !== undefined ? ` (${param.description})` : ""}`
  }
  return message.replace(param.pattern, format ?? "the expected format")
}

/** Tasks of `workflowId` whose title names `period` as a whole word ("Expense review 2026-11", not 2026-110). */
export const tasksForPeriod = (tasks: ReadonlyArray<TaskSummary>, workflowId: string, period: string): ReadonlyArray<TaskSummary> => {
  const p = period.trim()
  if (p === "") return []
  const word = new RegExp(`(?:^|[^\\p{L}\\p{N}])${p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?:$|[^\\p{L}\\p{N}])`, "u")
  return tasks.filter((t) => t.workflowId === workflowId && word.test(t.title))
}
