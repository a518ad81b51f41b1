/**
 * Decision links in the embedded store (README "Decision links"; the token and its signature:
 * ../../domain/links.ts). One row per approve/reject pair: who, which task and step, until when;
 * claimed while its decision is being made, used once, or revoked. The link page and its POST
 * (../server/linkRoutes.ts) read and claim rows here; the decision itself goes through the
 * gateway's decision path like any POST /action.
 *
 * Signing keys: SVC_LINK_SIGNING_KEYS (the first signs, every one verifies: rotate by putting a
 * new key first), else a key generated once into the database (`decision_link_keys`).
 */
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { randomBytes } from "node:crypto"
import { BadRequest, Conflict, NotFound } from "../../api/errors.js"
import { LINK_PATH } from "../../api/linkPath.js"
import { personKey } from "../../domain/engine.js"
import {
  DEFAULT_LINK_TTL_MS,
  type LinkBinding,
  type LinkDecision,
  MAX_LINK_TTL_MS,
  parseLinkTtl,
  parseToken,
  signLink,
  verifyLink
} from "../../domain/links.js"
import { personProblem } from "../../services/actorValue.js"
import type { WorkspaceClientService, WsEffect } from "../../upstream/WorkspaceClient.js"
import type { DecisionLinks } from "../../upstream/links.js"
import { guard, nowIso, runbookFromJson } from "./db.js"

/** The component a link decides: approval steps only. */
export const LINK_COMPONENT = "APPROVAL"

export { LINK_PATH }

/** A claim older than this belongs to a process that is gone: the pair may be claimed again. */
const CLAIM_TIMEOUT_MS = 60_000

export interface MakeDecisionLinks {
  readonly tenantId: string
  readonly taskId: string
  /** The person the links decide as. */
  readonly actor: string
  /** The step they decide; the task's current step must be it. Unset: the current step. */
  readonly stepId?: string | undefined
  /** How long they live; default 72 hours, at most 30 days. */
  readonly expiresInMs?: number | undefined
}

/** A stored pair, with the decision of the token that named it. */
export interface OpenedLink extends LinkBinding {
  readonly createdAt: string
}

/** One named person's pair in a `task.waiting` webhook event (`data.links`). */
export interface WaitingLinks {
  readonly actor: string
  readonly approveUrl: string
  readonly rejectUrl: string
  readonly expiresAt: string
}

/** The most people a `task.waiting` event carries links for (a step names at most 50 assignees). */
export const MAX_WAITING_LINKS = 20

/** What a token names, as its page tells it. */
export type LinkLookup =
  /** Malformed, unknown, altered, made with a key no longer held, or another tenant's: nothing. */
  | { readonly _tag: "Unknown" }
  | { readonly _tag: "Revoked"; readonly link: OpenedLink }
  | { readonly _tag: "Used"; readonly link: OpenedLink; readonly usedDecision: LinkDecision; readonly usedAt: string }
  | { readonly _tag: "Expired"; readonly link: OpenedLink }
  /** `deciding`: the link of the pair whose decision is being made now, when one is (and which is known). */
  | { readonly _tag: "Open"; readonly link: OpenedLink; readonly deciding?: LinkDecision | undefined }

export interface DecisionLinkStore {
  /** Whether links can be made (SVC_PUBLIC_URL set explicitly); `createDecisionLinks` says why not. */
  readonly linksEnabled: boolean
  /**
   * An approve/reject pair for (task, step, actor, expiry), under the explicit public URL. For the
   * CLI and for notifiers (a `task.waiting` webhook's links per named assignee). BadRequest without
   * an explicit SVC_PUBLIC_URL, for a bad actor or duration, or a step that is no APPROVAL step;
   * NotFound for another tenant's or an unknown task; Conflict when no step (or another) is current.
   */
  readonly createDecisionLinks: (input: MakeDecisionLinks) => WsEffect<DecisionLinks, BadRequest | NotFound | Conflict>
  /**
   * Resolves the signing keys (the database's key is made here, once, in its own statement): run
   * it before `mintWaitingLinks`' transaction, so that a key made in a transaction that then rolls
   * back is never the one kept in memory.
   */
  readonly signingReady: WsEffect<void>
  /**
   * The tenant whose gateway this process is (SVC_TENANT_SLUG), by id: its link pages serve that
   * tenant's links only, so it makes `task.waiting` links for that tenant alone. Undefined: bound
   * to no tenant (the standalone workspace service), or to a slug no tenant has.
   */
  readonly boundTenantId: WsEffect<string | undefined>
  /**
   * A pair per named person (not a group, not an agent) among the assignees of `stepId`, while
   * it is the task's current APPROVAL step; none otherwise (no explicit public URL, another step,
   * another component, no person named). At most MAX_WAITING_LINKS people, in the step's order,
   * one pair per person however often the step spells them. Inserts rows: the caller runs it in
   * the transaction that records what the links were sent in, so a rollback leaves none.
   */
  readonly mintWaitingLinks: (input: {
    readonly tenantId: string
    readonly taskId: string
    readonly stepId: string
  }) => WsEffect<ReadonlyArray<WaitingLinks>>
  /** What `token` names for `tenantId`'s gateway (any other tenant's pair is Unknown). */
  readonly openDecisionLink: (tenantId: string, token: string) => WsEffect<LinkLookup>
  /**
   * Holds the pair for one decision, by the link that makes it (`decision`, told to a request that
   * finds the pair held); false when it is used, revoked or held by another request.
   */
  readonly claimDecisionLink: (pairId: string, decision: LinkDecision) => WsEffect<boolean>
  /** Lets go of a claim whose decision did not happen (refused, conflict, store trouble). */
  readonly releaseDecisionLink: (pairId: string) => WsEffect<void>
  /** The pair has decided: neither link works again. */
  readonly completeDecisionLink: (pairId: string, decision: LinkDecision) => WsEffect<void>
  /**
   * Ends the open pairs of a task, of a person, or of that person on that task: how many, and how
   * many of them a decision was being made with at that moment (it may still stand).
   */
  readonly revokeDecisionLinks: (input: {
    readonly tenantId: string
    readonly taskId?: string | undefined
    readonly actor?: string | undefined
  }) => WsEffect<{ readonly revoked: number; readonly deciding: number }, BadRequest>
}

interface LinkRow {
  readonly id: string
  readonly tenant_id: string
  readonly task_id: string
  readonly step_id: string
  readonly actor: string
  readonly expires_at: string
  readonly created_at: string
  readonly claimed_at: string | null
  readonly used_at: string | null
  readonly used_decision: string | null
  readonly revoked_at: string | null
}

const bad = (message: string) => Effect.fail(new BadRequest({ message }))

export const NO_PUBLIC_URL =
  "No link was made: SVC_PUBLIC_URL is not set. Links are made only under the address people reach the gateway at, " +
  "which the operator sets explicitly (e.g. SVC_PUBLIC_URL=https://gateway.example.com)"

export const makeDecisionLinkStore = (
  service: Pick<WorkspaceClientService, "getTask" | "getNextStep">,
  options: {
    /** SVC_PUBLIC_URL when the operator set it; None: no link is made. */
    readonly publicUrl: Option.Option<string>
    /** SVC_LINK_SIGNING_KEYS: the first signs, all verify; None: the key generated into the database. */
    readonly signingKeys: Option.Option<ReadonlyArray<string>>
    /** Why no link is made here at all (a process that serves no link page); overrides `publicUrl`. */
    readonly unavailable?: string | undefined
    /**
     * The tenant whose gateway this process is (SVC_TENANT_SLUG): its link pages serve that
     * tenant's links only, so `task.waiting` links are made for it alone. Unset: any tenant's.
     */
    readonly boundTenantSlug?: string | undefined
  }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const base = options.unavailable !== undefined ? Option.none<string>() : Option.map(options.publicUrl, (u) => u.replace(/\/+$/, ""))

    // The database's key, made by whichever process first needs it (the others read that one).
    const storedKey = Effect.gen(function*() {
      yield* sql`INSERT INTO decision_link_keys (id, secret, created_at)
        VALUES (1, ${randomBytes(32).toString("base64url")}, ${nowIso()}) ON CONFLICT (id) DO NOTHING`
      const [row] = yield* sql<{ readonly secret: string }>`SELECT secret FROM decision_link_keys WHERE id = 1`
      return [Buffer.from(row!.secret, "base64url")] as ReadonlyArray<Uint8Array>
    })
    // Kept once read; a failed read (a busy database) is tried again next time, never kept.
    let readKeys: ReadonlyArray<Uint8Array> | undefined
    const keys: Effect.Effect<ReadonlyArray<Uint8Array>, SqlError> = Option.isSome(options.signingKeys)
      ? Effect.succeed(options.signingKeys.value.map((k) => Buffer.from(k, "utf8")))
      : Effect.suspend(() => readKeys !== undefined ? Effect.succeed(readKeys) : Effect.map(storedKey, (k) => (readKeys = k)))

    // The bound tenant's id, once known (a slug no tenant has yet is looked up again next time).
    let boundTenantId: string | undefined
    const boundTenant: Effect.Effect<string | undefined, SqlError> = options.boundTenantSlug === undefined
      ? Effect.succeed(undefined)
      : Effect.suspend(() =>
        boundTenantId !== undefined ? Effect.succeed(boundTenantId) : Effect.map(
          sql<{ readonly id: string }>`SELECT id FROM tenants WHERE slug = ${options.boundTenantSlug}`,
          ([row]) => (boundTenantId = row?.id)
        )
      )

    const taskOfTenant = (tenantId: string, taskId: string) =>
      Effect.flatMap(service.getTask(taskId), (task) =>
        task.tenantId === tenantId ? Effect.succeed(task) : Effect.fail(new NotFound({ message: `Task ${taskId} not found` })))

    /** Stores a pair and signs its two links (`base` is set: the callers checked). */
    const mint = (tenantId: string, taskId: string, stepId: string, actor: string, ttl: number) =>
      Effect.gen(function*() {
        const createdAt = nowIso()
        const expiresAt = new Date(Date.parse(createdAt) + ttl).toISOString()
        const pairId = randomBytes(16).toString("base64url")
        yield* sql`INSERT INTO decision_links ${
          sql.insert({
            id: pairId,
            tenant_id: tenantId,
            task_id: taskId,
            step_id: stepId,
            actor,
            actor_key: personKey(actor),
            expires_at: expiresAt,
            created_at: createdAt
          })
        }`
        const [key] = yield* keys
        const binding = { pairId, tenantId, taskId, stepId, actor, expiresAt }
        const url = (decision: LinkDecision) => `${Option.getOrThrow(base)}${LINK_PATH}/${signLink(key!, { ...binding, decision })}`
        const made: WaitingLinks = { actor, approveUrl: url("approve"), rejectUrl: url("reject"), expiresAt }
        return made
      })

    const mintWaitingLinks: DecisionLinkStore["mintWaitingLinks"] = (input) =>
      Effect.gen(function*() {
        if (Option.isNone(base)) return []
        // Another tenant's links would open on this tenant's gateway, which serves only its own.
        if (options.boundTenantSlug !== undefined && (yield* boundTenant) !== input.tenantId) return []
        // The step as the runbook names it (its assignees), while it is the task's current one.
        const [row] = yield* sql<{ readonly status: string; readonly current_step: string | null; readonly runbook: string | null }>`
          SELECT t.status, t.current_step, w.runbook FROM tasks t JOIN workflows w ON w.id = t.workflow_id
          WHERE t.id = ${input.taskId} AND t.tenant_id = ${input.tenantId}`
        if (row === undefined || row.status !== "IN_PROGRESS" || row.current_step !== input.stepId) return []
        const step = runbookFromJson(row.runbook)?.steps.find((s) => s.id === input.stepId)
        if (step === undefined || step.displayHint.component !== LINK_COMPONENT) return []
        // People only: groups (group:<name>) and agents are no actor a link can decide as, nor is a
        // name the edge could never send (invisible characters and the like).
        const seen = new Set<string>()
        const people: Array<string> = []
        for (const assignee of step.assignees ?? []) {
          if (personProblem(assignee) !== undefined) continue
          const key = personKey(assignee)
          if (seen.has(key)) continue
          seen.add(key)
          people.push(assignee)
          if (people.length === MAX_WAITING_LINKS) break
        }
        const made: Array<WaitingLinks> = []
        for (const actor of people) made.push(yield* mint(input.tenantId, input.taskId, step.id, actor, DEFAULT_LINK_TTL_MS))
        return made
      }).pipe(guard("mintWaitingLinks"))

    const createDecisionLinks: DecisionLinkStore["createDecisionLinks"] = (input) =>
      Effect.gen(function*() {
        if (Option.isNone(base)) return yield* bad(options.unavailable ?? NO_PUBLIC_URL)
        const problem = personProblem(input.actor)
        if (problem !== undefined) return yield* bad(`actor: ${problem}`)
        // This gateway's link pages open its own tenant's links only: another's would never work.
        if (options.boundTenantSlug !== undefined && (yield* boundTenant) !== input.tenantId) {
          return yield* bad(
            `tenantSlug: this gateway serves tenant "${options.boundTenantSlug.slice(0, 64)}" and opens its links only; ` +
              "links for another tenant are made by its own gateway (that gateway's admin listener)"
          )
        }
        const ttl = input.expiresInMs ?? DEFAULT_LINK_TTL_MS
        if (!Number.isSafeInteger(ttl) || ttl < 1000 || ttl > MAX_LINK_TTL_MS) {
          return yield* bad("expiresIn: a link lives from one second to 30 days")
        }
        const task = yield* taskOfTenant(input.tenantId, input.taskId)
        const next = yield* service.getNextStep(input.tenantId, task.id)
        const step = next.step
        if (step === null || task.currentStep === null) {
          return yield* Effect.fail(new Conflict({ message: `Task ${task.id} is ${task.status}: no step waits for a decision` }))
        }
        if (input.stepId !== undefined && input.stepId !== step.id) {
          return yield* Effect.fail(new Conflict({ message: `Step "${input.stepId}" is not the current step: the task is at step "${step.id}"` }))
        }
        if (step.displayHint.component !== LINK_COMPONENT) {
          return yield* bad(
            `Current step "${step.id}" (${step.displayHint.component}) is not an ${LINK_COMPONENT} step: links decide approval steps only`
          )
        }
        const made = yield* mint(input.tenantId, task.id, step.id, input.actor, ttl)
        const links: DecisionLinks = {
          tenantId: input.tenantId,
          taskId: task.id,
          stepId: step.id,
          stepTitle: step.title,
          actor: input.actor,
          expiresAt: made.expiresAt,
          approveUrl: made.approveUrl,
          rejectUrl: made.rejectUrl
        }
        return links
      }).pipe(guard("createDecisionLinks"))

    /**
     * The link of an open pair whose decision is being made now: a claim younger than
     * CLAIM_TIMEOUT_MS, by the link its `used_decision` names (set with the claim, cleared with
     * its release; a claim taken by an older version's process names none).
     */
    const decidingOf = (row: LinkRow): { deciding?: LinkDecision } =>
      row.claimed_at !== null && row.claimed_at >= new Date(Date.now() - CLAIM_TIMEOUT_MS).toISOString() &&
        (row.used_decision === "approve" || row.used_decision === "reject")
        ? { deciding: row.used_decision }
        : {}

    const openDecisionLink: DecisionLinkStore["openDecisionLink"] = (tenantId, token) =>
      Effect.gen(function*() {
        const unknown: LinkLookup = { _tag: "Unknown" }
        const parsed = parseToken(token)
        if (parsed === undefined) return unknown
        const [row] = yield* sql<LinkRow>`SELECT id, tenant_id, task_id, step_id, actor, expires_at, created_at,
          claimed_at, used_at, used_decision, revoked_at FROM decision_links WHERE id = ${parsed.pairId}`
        if (row === undefined || row.tenant_id !== tenantId) return unknown
        const link: OpenedLink = {
          pairId: row.id,
          tenantId: row.tenant_id,
          taskId: row.task_id,
          stepId: row.step_id,
          decision: parsed.decision,
          actor: row.actor,
          expiresAt: row.expires_at,
          createdAt: row.created_at
        }
        if (!verifyLink(yield* keys, parsed, link)) return unknown
        // Used before revoked: a pair revoked while its decision was being made, which then
        // decided, says what happened to it.
        const lookup: LinkLookup = row.used_at !== null
          ? { _tag: "Used", link, usedDecision: row.used_decision === "reject" ? "reject" : "approve", usedAt: row.used_at }
          : row.revoked_at !== null
          ? { _tag: "Revoked", link }
          // The expiry instant itself is past: a link works strictly before it.
          : Date.now() >= Date.parse(row.expires_at)
          ? { _tag: "Expired", link }
          : { _tag: "Open", link, ...decidingOf(row) }
        return lookup
      }).pipe(guard("openDecisionLink"))

    const claimDecisionLink: DecisionLinkStore["claimDecisionLink"] = (pairId, decision) =>
      Effect.gen(function*() {
        const now = nowIso()
        const stale = new Date(Date.now() - CLAIM_TIMEOUT_MS).toISOString()
        const rows = yield* sql<{ readonly id: string }>`UPDATE decision_links SET claimed_at = ${now}, used_decision = ${decision}
          WHERE id = ${pairId} AND used_at IS NULL AND revoked_at IS NULL AND (claimed_at IS NULL OR claimed_at < ${stale})
          RETURNING id`
        return rows.length === 1
      }).pipe(guard("claimDecisionLink"))

    const releaseDecisionLink: DecisionLinkStore["releaseDecisionLink"] = (pairId) =>
      Effect.asVoid(sql`UPDATE decision_links SET claimed_at = NULL, used_decision = NULL WHERE id = ${pairId} AND used_at IS NULL`).pipe(
        guard("releaseDecisionLink")
      )

    const completeDecisionLink: DecisionLinkStore["completeDecisionLink"] = (pairId, decision) =>
      Effect.asVoid(sql`UPDATE decision_links SET used_at = ${nowIso()}, used_decision = ${decision}
        WHERE id = ${pairId} AND used_at IS NULL`).pipe(guard("completeDecisionLink"))

    const revokeDecisionLinks: DecisionLinkStore["revokeDecisionLinks"] = (input) =>
      Effect.gen(function*() {
        if (input.taskId === undefined && input.actor === undefined) return yield* bad("taskId or actor is required")
        const stale = new Date(Date.now() - CLAIM_TIMEOUT_MS).toISOString()
        const rows = yield* sql<{ readonly id: string; readonly claimed_at: string | null }>`UPDATE decision_links
          SET revoked_at = ${nowIso()}
          WHERE tenant_id = ${input.tenantId} AND used_at IS NULL AND revoked_at IS NULL
          ${input.taskId !== undefined ? sql`AND task_id = ${input.taskId}` : sql``}
          ${input.actor !== undefined ? sql`AND actor_key = ${personKey(input.actor)}` : sql``}
          RETURNING id, claimed_at`
        // A pair claimed by a decision under way cannot be stopped: that decision may still stand
        // (it is then "used"; refused, the pair stays revoked). Counted apart, not as revoked.
        const deciding = rows.filter((r) => r.claimed_at !== null && r.claimed_at >= stale).length
        return { revoked: rows.length - deciding, deciding }
      }).pipe(guard("revokeDecisionLinks"))

    const store: DecisionLinkStore = {
      linksEnabled: Option.isSome(base),
      createDecisionLinks,
      signingReady: Effect.asVoid(keys).pipe(guard("signingReady")),
      boundTenantId: boundTenant.pipe(guard("boundTenantId")),
      mintWaitingLinks,
      openDecisionLink,
      claimDecisionLink,
      releaseDecisionLink,
      completeDecisionLink,
      revokeDecisionLinks
    }
    return store
  })

/** `--expires-in`'s text as milliseconds, or a BadRequest naming the field. */
export const linkTtlOf = (text: string | undefined): Effect.Effect<number | undefined, BadRequest> => {
  if (text === undefined) return Effect.succeed(undefined)
  const parsed = parseLinkTtl(text)
  return "ms" in parsed ? Effect.succeed(parsed.ms) : bad(`expiresIn: ${parsed.problem}`)
}
