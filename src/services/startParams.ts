/**
 * Start parameters: derived from the global block of a runbook's config schema, and the check
 * of a create-task `context` against them.
 */
import * as Effect from "effect/Effect"
import { BadRequest } from "../api/errors.js"
import type { StartParam, StartParamType } from "../api/resources.js"
import type { Workspace } from "../upstream/WorkspaceClient.js"

const TYPES: ReadonlyArray<StartParamType> = ["string", "number", "boolean", "array", "object"]

/** One entry per property, in key order; required exactly when the property has no default. */
export const startParamsOf = (runbook: Workspace.Runbook): ReadonlyArray<StartParam> =>
  Object.entries(runbook.configSchema.global?.properties ?? {}).map(([key, prop]) => {
    const type = TYPES.find((t) => t === prop.type) ?? "string"
    return {
      key,
      type,
      ...(prop.description !== undefined ? { description: prop.description } : {}),
      ...(prop.pattern !== undefined ? { pattern: prop.pattern } : {}),
      ...(prop.enum !== undefined ? { enum: prop.enum } : {}),
      ...("default" in prop ? { default: prop.default } : {}),
      required: !("default" in prop)
    }
  })

const typeOf = (value: unknown): StartParamType | "null" =>
  value === null ? "null" : Array.isArray(value) ? "array" : typeof value as StartParamType

/**
 * How a pattern is run on a value: plain `re.test` where only the user who typed the value waits
 * (the console), bounded on the server (src/lib/boundedRegExp.ts), where "timeout" refuses it.
 */
export type PatternTest = (re: RegExp, value: string) => boolean | "timeout"

const plainTest: PatternTest = (re, value) => re.test(value)

/** What is wrong with one value for one parameter (type, pattern, enum), or undefined; the console checks with it too. */
export const problem = (param: StartParam, value: unknown, test: PatternTest = plainTest): string | undefined => {
  const actual = typeOf(value)
  if (actual !== param.type) return `must be of type ${param.type}, got ${actual}`
  if (param.pattern !== undefined && typeof value === "string") {
    let re: RegExp
    try {
      re = new RegExp(param.pattern, "u")
    } catch {
      return undefined // a runbook's unparsable pattern is the runbook's bug, not the caller's
    }
    const matched = test(re, value)
    if (matched === "timeout") {
      return `could not be checked against the workflow's pattern ${param.pattern} in time (the pattern backtracks ` +
        "too much on this value; the runbook's pattern needs fixing)"
    }
    if (!matched) return `must match the pattern ${param.pattern}`
  }
  if (param.enum !== undefined && !param.enum.some((allowed) => JSON.stringify(allowed) === JSON.stringify(value))) {
    return `must be one of ${param.enum.map((v) => JSON.stringify(v)).join(", ")}`
  }
  return undefined
}

/** 400 naming the key on a missing required key, a wrong type, a pattern or enum mismatch. */
export const checkContext = (
  params: ReadonlyArray<StartParam>,
  context: Record<string, unknown>,
  test: PatternTest = plainTest
): Effect.Effect<void, BadRequest> => {
  for (const param of params) {
    if (!Object.hasOwn(context, param.key) || context[param.key] === undefined) {
      if (param.required) {
        return Effect.fail(new BadRequest({ message: `context.${param.key}: is required by the workflow` }))
      }
      continue
    }
    const issue = problem(param, context[param.key], test)
    if (issue !== undefined) return Effect.fail(new BadRequest({ message: `context.${param.key}: ${issue}` }))
  }
  return Effect.void
}
