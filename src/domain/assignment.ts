/**
 * Who a step waits for, and who may act on it (README "Inbox and assignment"). Pure: every store
 * applies these in the transaction that records a decision, a row action, a file signal or a claim.
 *
 * A runbook step names people and groups in `assignees` (actors as the edge names them, groups as
 * `group:<name>`) and one agent in `agentId`. With assignment enforced (an identity is configured
 * at the edge; agents, named by their keys, always), only they may act; a person takes over an
 * agent's step only by claiming it with `override`. Without an identity it is shown, not enforced.
 * A claim blocks nobody else unless the step says `requireClaim`.
 */
import { actorKey, AGENT_PREFIX, agentIdOf, groupNameOf } from "./actorSkeleton.js"
import { ISO_DURATION } from "../upstream/model.js"

/** The assignment fields of a runbook step (src/upstream/model.ts RunbookStep). */
export interface StepAssignment {
  readonly id: string
  readonly assignees?: ReadonlyArray<string> | undefined
  readonly agentId?: string | undefined
  readonly requireClaim?: boolean | undefined
  readonly dueIn?: string | undefined
}

/** The current step's claim, as a task row holds it. */
export interface Claim {
  readonly stepId: string
  readonly by: string
  readonly at: string
  /** A person who took over an agent's step. */
  readonly override: boolean
}

/** Who is asking: the actor, the groups the edge gave them, and whether assignment holds for them. */
export interface Caller {
  readonly actor: string | undefined
  readonly groups: ReadonlyArray<string>
  /** An identity is configured at the edge (agents: always). */
  readonly enforced: boolean
}

/** Everyone the step waits for, as shown: its people and groups, then `agent:<uuid>` for its agent. */
export const assigneesOf = (step: StepAssignment): ReadonlyArray<string> => [
  ...(step.assignees ?? []),
  ...(step.agentId !== undefined ? [`${AGENT_PREFIX}${step.agentId}`] : [])
]

/** The claim when it is on `stepId` (a claim on an earlier step lapsed when the step moved on). */
export const claimOn = (claim: Claim | null | undefined, stepId: string | null): Claim | undefined =>
  claim != null && stepId !== null && claim.stepId === stepId ? claim : undefined

const enforcedFor = (caller: Caller) => caller.enforced || (caller.actor !== undefined && agentIdOf(caller.actor) !== undefined)

/** Whether `caller` is one of the step's assignees (people by `actorKey`, groups by name, its agent by id). */
export const isAssignee = (step: StepAssignment, caller: Caller): boolean => {
  if (caller.actor === undefined) return false
  const agent = agentIdOf(caller.actor)
  if (agent !== undefined) return step.agentId !== undefined && step.agentId.toLowerCase() === agent
  const me = actorKey(caller.actor)
  const groups = new Set(caller.groups.map(actorKey))
  return (step.assignees ?? []).some((a) => {
    const group = groupNameOf(a)
    return group !== undefined ? groups.has(actorKey(group)) : actorKey(a) === me
  })
}

/** Whether the step names people or groups (not only an agent). */
const hasPeople = (step: StepAssignment) => (step.assignees ?? []).length > 0

const heldBy = (claim: Claim | undefined, caller: Caller) =>
  claim !== undefined && caller.actor !== undefined && actorKey(claim.by) === actorKey(caller.actor)

const waitsFor = (step: StepAssignment) => assigneesOf(step).join(", ")

/**
 * Why `caller` may not decide, act on rows of, or submit a file to the step (a 403's message);
 * undefined when they may. `claim` is the step's claim, if any.
 */
export const actRefusal = (step: StepAssignment, caller: Caller, claim: Claim | undefined): string | undefined => {
  if (!enforcedFor(caller)) return undefined
  const holds = heldBy(claim, caller)
  // A person who took the step over (override) acts for its agent; everyone else must be assigned.
  if (!(holds && claim?.override === true) && assigneesOf(step).length > 0) {
    if (caller.actor === undefined) return `Step "${step.id}" waits for ${waitsFor(step)}; this request names nobody`
    if (!isAssignee(step, caller)) {
      const agentHint = step.agentId !== undefined && agentIdOf(caller.actor) === undefined
        ? " (a person takes over an agent's step by claiming it with override: true)"
        : ""
      return `Step "${step.id}" waits for ${waitsFor(step)}; ${caller.actor} is not assigned${agentHint}`
    }
  }
  // Taken over: the agent waits until the person releases the step (else both would act on it).
  if (claim?.override === true && !holds && caller.actor !== undefined && agentIdOf(caller.actor) !== undefined) {
    return `Step "${step.id}" was taken over from its agent by ${claim.by} (a claim with override): the agent may act on it once that claim is released`
  }
  if (step.requireClaim === true && !holds) {
    return claim !== undefined
      ? `Step "${step.id}" is claimed by ${claim.by}: only the claim's holder may act on it`
      : `Step "${step.id}" must be claimed before it is acted on (POST /v1/tasks/:taskId/claim)`
  }
  return undefined
}

/** What a claim request may do: take the step, refuse (403/409), or nothing (already held). */
export type ClaimDecision =
  | { readonly _tag: "claim"; readonly override: boolean }
  | { readonly _tag: "held" }
  | { readonly _tag: "forbidden"; readonly message: string }
  | { readonly _tag: "conflict"; readonly message: string }

/**
 * A claim of the step by `caller`: they must be named; with assignment enforced they must be an
 * assignee, except that `override` lets a person take an agent's step (one whose assignees name no
 * person or group, or name them and include the caller). A step another holds answers 409 naming
 * the holder (no one takes a claim over); the holder claiming again is a no-op.
 */
export const claimDecision = (step: StepAssignment, caller: Caller, current: Claim | undefined, override: boolean): ClaimDecision => {
  if (caller.actor === undefined) {
    return { _tag: "forbidden", message: `A claim needs a named actor: this request names nobody (the edge names the actor)` }
  }
  if (current !== undefined) {
    return heldBy(current, caller)
      ? { _tag: "held" }
      : { _tag: "conflict", message: `Step "${step.id}" is already claimed by ${current.by} (since ${current.at})` }
  }
  const agentCaller = agentIdOf(caller.actor) !== undefined
  if (override) {
    if (agentCaller) return { _tag: "forbidden", message: `override is for people taking over an agent's step; agents claim their own steps` }
    if (step.agentId === undefined) return { _tag: "forbidden", message: `Step "${step.id}" is not assigned to an agent: override does not apply` }
    if (enforcedFor(caller) && hasPeople(step) && !isAssignee(step, caller)) {
      return { _tag: "forbidden", message: `Step "${step.id}" waits for ${waitsFor(step)}; ${caller.actor} is not assigned` }
    }
    return { _tag: "claim", override: true }
  }
  if (enforcedFor(caller) && assigneesOf(step).length > 0 && !isAssignee(step, caller)) {
    const hint = step.agentId !== undefined && !agentCaller ? " (a person takes over an agent's step with override: true)" : ""
    return { _tag: "forbidden", message: `Step "${step.id}" waits for ${waitsFor(step)}; ${caller.actor} is not assigned${hint}` }
  }
  return { _tag: "claim", override: false }
}

/** What a decision that claims first (a decision link's) does before it is judged: nothing, take the step, or a 409. */
export type ClaimFirst =
  | { readonly _tag: "none" }
  | { readonly _tag: "take" }
  | { readonly _tag: "conflict"; readonly message: string }

/**
 * A decision that claims first, on a step that requires a claim (`requireClaim`): a decision
 * link's person acts from a message and has no way to claim there, so the decision takes the
 * step for them when nobody holds it (in the transaction that records the decision: a decision
 * then refused leaves no claim). A claim another holds is a 409 naming the holder; one the caller
 * holds, or a claim the caller may not take (not assigned: the decision's own 403 says why),
 * changes nothing here.
 */
export const claimFirst = (step: StepAssignment, caller: Caller, current: Claim | undefined): ClaimFirst => {
  if (step.requireClaim !== true) return { _tag: "none" }
  if (current !== undefined) {
    return heldBy(current, caller)
      ? { _tag: "none" }
      : { _tag: "conflict", message: `Step "${step.id}" is claimed by ${current.by} (since ${current.at}): only they may decide it while they hold it` }
  }
  return claimDecision(step, caller, undefined, false)._tag === "claim" ? { _tag: "take" } : { _tag: "none" }
}

/** Whether `caller` may release the claim: its holder only (with assignment enforced; anyone named otherwise). */
export const releaseRefusal = (claim: Claim, caller: Caller): string | undefined =>
  heldBy(claim, caller) || (!enforcedFor(caller) && caller.actor !== undefined)
    ? undefined
    : `The claim on step "${claim.stepId}" is held by ${claim.by}: only they release it`

// ---------------------------------------------------------------------------------------------
// dueIn: an ISO 8601 duration of weeks, days, hours, minutes and seconds

/** The duration in ms, or undefined when it is not one this accepts (calendar years and months are not: their length varies). */
export const durationMs = (text: string): number | undefined => {
  const m = ISO_DURATION.exec(text)
  if (m === null) return undefined
  const [w, d, h, min, s] = m.slice(1).map((v) => (v === undefined ? 0 : Number(v)))
  return ((((w! * 7 + d!) * 24 + h!) * 60 + min!) * 60 + s!) * 1000
}

/** When the step is due, having become current at `since` (ISO); undefined when it names no dueIn. */
export const dueAtOf = (step: StepAssignment, since: string): string | undefined => {
  if (step.dueIn === undefined) return undefined
  const ms = durationMs(step.dueIn)
  const start = Date.parse(since)
  if (ms === undefined || Number.isNaN(start)) return undefined
  const due = start + ms
  return due > 8_640_000_000_000_000 ? undefined : new Date(due).toISOString()
}
