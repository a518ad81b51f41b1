/**
 * The embedded store's inbox and claims (README "Inbox and assignment"). A page is one query over
 * the tasks (joined to their entities) after the tenant's runbooks are read: the step filters
 * become (workflow, step) pairs (../../domain/inbox.ts), so the page needs only plain columns
 * and the `tasks_waiting` index. A claim is a column set on the task, valid while it names the
 * current step; taking and releasing one write the timeline in the same transaction. Both are
 * idempotent writes (an Idempotency-Key's retry gets the first answer and writes nothing).
 */
import * as Effect from "effect/Effect"
import type * as Statement from "effect/sql/Statement"
import { BadRequest, Conflict, Forbidden } from "../../api/errors.js"
import { rootTaskId } from "../../api/ids.js"
import type { WorkspaceClientService } from "../../upstream/WorkspaceClient.js"
import type { Workspace } from "../../upstream/model.js"
import { claimDecision, claimOn, releaseRefusal, type Caller } from "../../domain/assignment.js"
import { claimEvent } from "../../domain/engine.js"
import { inboxItemOf, selectSteps } from "../../domain/inbox.js"
import { writeFingerprint } from "../../domain/idempotency.js"
import { attributionNow, type Attribution } from "../../services/Actor.js"
import { claimOfRow, nowIso, runbookFromJson, type TaskRow, taskOfRow } from "./db.js"
import { isoInstant } from "../../lib/isoInstant.js"
import { writeClaim } from "./claims.js"
import { appendToTimeline } from "./timeline.js"
import type { Transactions } from "./transaction.js"

const callerOf = (who: Attribution): Caller => ({ actor: who.actor, groups: who.groups ?? [], enforced: who.enforced === true })

export const inboxRecords = (tx: Transactions): Pick<WorkspaceClientService, "inbox" | "claimStep" | "releaseClaim"> => {
  const { sql, guard, taskOf, runbookOf, lockTask, write, idempotent } = tx

  /** The tenant's workflows with their runbooks (a runbook that does not decode counts as none). */
  const runbooksOf = (tenantId: string) =>
    Effect.map(
      sql<{ id: string; runbook: string | null }>`SELECT id, runbook FROM workflows WHERE tenant_id = ${tenantId} OR tenant_id IS NULL`,
      (rows) =>
        rows.map((r) => {
          let runbook: Workspace.Runbook | null = null
          try {
            runbook = runbookFromJson(r.runbook)
          } catch {
            runbook = null
          }
          return { id: r.id, runbook }
        })
    )

  return {
    inbox: (tenantId, query) =>
      Effect.gen(function*() {
        const caller = callerOf(yield* attributionNow)
        const workflows = yield* runbooksOf(tenantId)
        const runbooks = new Map(workflows.map((w) => [w.id, w.runbook]))
        const selected = selectSteps(workflows, query, caller)
        if (selected !== undefined && selected.length === 0) return { items: [], more: false }
        const clauses: Array<Statement.Fragment> = [
          sql`t.tenant_id = ${tenantId}`,
          sql`t.status = 'IN_PROGRESS'`,
          sql`t.current_step IS NOT NULL`
        ]
        if (query.entityId !== undefined) clauses.push(sql`t.entity_id = ${query.entityId}`)
        if (query.workflowId !== undefined) clauses.push(sql`t.workflow_id = ${query.workflowId}`)
        if (selected !== undefined) {
          clauses.push(sql.or(selected.map((s) =>
            sql.and([
              sql`t.workflow_id = ${s.workflowId}`,
              sql`t.current_step = ${s.stepId}`,
              ...(s.overdueBefore !== undefined ? [sql`t.waiting_since < ${s.overdueBefore}`] : [])
            ])
          )))
        }
        if (query.after !== undefined) {
          // A cursor made before the stored times were one spelling may carry another (../../lib/isoInstant.ts).
          const { taskId } = query.after
          const waitingSince = isoInstant(query.after.waitingSince)
          clauses.push(sql`(t.waiting_since > ${waitingSince} OR (t.waiting_since = ${waitingSince} AND t.id > ${taskId}))`)
        }
        const rows = yield* sql<TaskRow & { entity_name: string }>`
          SELECT t.*, e.name AS entity_name FROM tasks t JOIN entities e ON e.id = t.entity_id
          WHERE ${sql.and(clauses)}
          ORDER BY t.waiting_since, t.id
          LIMIT ${query.limit + 1}`
        const items = rows.slice(0, query.limit).flatMap((row) => {
          const item = inboxItemOf(
            { task: taskOfRow(row), entityName: row.entity_name, waitingSince: row.waiting_since ?? row.created_at, claim: claimOfRow(row) },
            runbooks.get(row.workflow_id) ?? null,
            caller,
            query.now
          )
          return item === undefined ? [] : [item]
        })
        // The position of the last row read, even when its runbook names no such step (skipped).
        const last = rows[Math.min(rows.length, query.limit) - 1]
        return {
          items,
          more: rows.length > query.limit,
          ...(last !== undefined ? { last: { waitingSince: last.waiting_since ?? last.created_at, taskId: last.id } } : {})
        }
      }).pipe(guard("inbox")),

    claimStep: (tenantId, taskId, override) =>
      Effect.flatMap(attributionNow, (who) =>
        write(idempotent(tenantId, writeFingerprint.claimStep(taskId, override), Effect.gen(function*() {
          yield* lockTask(taskId)
          const row = yield* taskOf(tenantId, taskId)
          if (row.current_step === null || row.status !== "IN_PROGRESS") {
            return yield* Effect.fail(new BadRequest({ message: `Task is ${row.status} with no step to claim`, currentStatus: row.status }))
          }
          const runbook = yield* Effect.orElseSucceed(runbookOf(row.workflow_id), () => null)
          const step = runbook?.steps.find((s) => s.id === row.current_step) ?? { id: row.current_step }
          const current = claimOn(claimOfRow(row), row.current_step)
          const decided = claimDecision(step, callerOf(who), current, override)
          switch (decided._tag) {
            case "forbidden":
              return yield* Effect.fail(new Forbidden({ message: decided.message }))
            case "conflict":
              return yield* Effect.fail(new Conflict({ message: decided.message }))
            case "held":
              return { stepId: current!.stepId, by: current!.by, at: current!.at, override: current!.override }
          }
          const claim = { stepId: row.current_step, by: who.actor!, at: nowIso(), override: decided.override }
          yield* writeClaim(tx, tenantId, row.id, claim, who)
          return claim
        })))).pipe(guard("claimStep"), Effect.tap(() => Effect.sync(() => tx.bell.ring(rootTaskId(taskId))))),

    releaseClaim: (tenantId, taskId) =>
      Effect.flatMap(attributionNow, (who) =>
        write(idempotent(tenantId, writeFingerprint.releaseClaim(taskId), Effect.gen(function*() {
          yield* lockTask(taskId)
          const row = yield* taskOf(tenantId, taskId)
          const current = claimOn(claimOfRow(row), row.current_step)
          if (current === undefined) return false
          const refused = releaseRefusal(current, callerOf(who))
          if (refused !== undefined) return yield* Effect.fail(new Forbidden({ message: refused }))
          yield* sql`UPDATE tasks SET claim_step = NULL, claimed_by = NULL, claimed_at = NULL, claim_override = 0 WHERE id = ${row.id}`
          yield* appendToTimeline(sql, tenantId, row.id, [claimEvent("released", current, who)], nowIso())
          return true
        })))).pipe(
          guard("releaseClaim"),
          Effect.tap((released) => Effect.sync(() => released && tx.bell.ring(rootTaskId(taskId)))),
          Effect.asVoid
        )
  }
}
