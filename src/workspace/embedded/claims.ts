/**
 * Taking a step's claim (a column set on the task, with step.claimed in the same transaction),
 * by a claim request (./inbox.ts) or by a decision that claims first.
 *
 * A decision that claims first (Workspace.Signal `claimFirst`, what a decision link's POST sends):
 * on a step that requires a claim and that nobody holds, the claim is taken for the request's
 * actor in the decision's own transaction, before the decision is judged (../../domain/assignment.ts
 * `claimFirst` says when). The timeline then reads step.claimed, then the decision, both by that
 * person; a decision the step's rules refuse rolls the claim back with it.
 */
import * as Effect from "effect/Effect"
import { Conflict } from "../../api/errors.js"
import { type Claim, claimFirst, claimOn } from "../../domain/assignment.js"
import { claimEvent, isDecision } from "../../domain/engine.js"
import type { Attribution } from "../../services/Actor.js"
import type { Workspace } from "../../upstream/model.js"
import { claimOfRow, nowIso, type TaskRow } from "./db.js"
import { appendToTimeline } from "./timeline.js"
import type { Transactions } from "./transaction.js"

/** Runs inside the decision's transaction, the task locked; `task` is its row as read there. */
export const claimBeforeDecision = (tx: Transactions, tenantId: string, task: TaskRow, signal: Workspace.Signal, who: Attribution) =>
  Effect.gen(function*() {
    if (signal.claimFirst !== true || !isDecision(signal.name) || task.current_step === null || task.status !== "IN_PROGRESS") return
    // Only the step the decision is for: one that is no longer current is the decision's own 409.
    if (signal.expectedStep !== undefined && signal.expectedStep !== task.current_step) return
    const runbook = yield* Effect.orElseSucceed(tx.runbookOf(task.workflow_id), () => null)
    const step = runbook?.steps.find((s) => s.id === task.current_step)
    if (step === undefined) return
    const caller = { actor: who.actor, groups: who.groups ?? [], enforced: who.enforced === true }
    const first = claimFirst(step, caller, claimOn(claimOfRow(task), task.current_step))
    if (first._tag === "conflict") return yield* Effect.fail(new Conflict({ message: first.message }))
    if (first._tag === "none") return
    yield* writeClaim(tx, tenantId, task.id, { stepId: task.current_step, by: who.actor!, at: nowIso(), override: false }, who)
  })

/** Sets the claim on the task's row and writes step.claimed (inside the caller's transaction). */
export const writeClaim = (tx: Transactions, tenantId: string, taskId: string, claim: Claim, who: Attribution) =>
  Effect.andThen(
    tx.sql`UPDATE tasks SET claim_step = ${claim.stepId}, claimed_by = ${claim.by}, claimed_at = ${claim.at},
      claim_override = ${claim.override ? 1 : 0} WHERE id = ${taskId}`,
    appendToTimeline(tx.sql, tenantId, taskId, [claimEvent("claimed", claim, who)], claim.at)
  )
