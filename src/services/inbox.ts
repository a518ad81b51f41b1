/**
 * The inbox and claims (README "Inbox and assignment"), shared by the HTTP handlers, the agent
 * tool server and the CLI. The cursor is the position of the last task a page read
 * (waitingSince, task id) bound to the page's filters: a cursor sent with other filters, or one
 * this gateway did not make, is a 400. A position, not a snapshot: it names no task of another
 * tenant or entity that could be read through it (every page is scoped again).
 */
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import { BadRequest } from "../api/errors.js"
import { INBOX_CURSOR_MESSAGE, INBOX_PAGE_DEFAULT, type InboxPage, type InboxQueryParams, type Me } from "../api/inbox.js"
import type { InboxQuery } from "../upstream/inbox.js"
import { WorkspaceClient } from "../upstream/WorkspaceClient.js"
import { ringAfterSignal } from "./TaskEventBell.js"
import { actorNow, currentIdentity, type Identity } from "./Actor.js"
import { actorProblem } from "./actorValue.js"
import { groupNameOf } from "../domain/actorSkeleton.js"
import { Tenant } from "./Tenant.js"

type Filters = Omit<InboxQueryParams, "limit" | "cursor">

/** What a cursor is bound to: the filters, so a page of one query never continues another. */
const filterTag = (tenantId: string, f: Filters) =>
  createHash("sha256")
    .update(JSON.stringify([tenantId, f.awaiting ?? null, f.assignee ?? null, f.entityId ?? null, f.workflowId ?? null, f.overdue ?? null]))
    .digest("base64url")
    .slice(0, 12)

const encodeCursor = (tag: string, after: { readonly waitingSince: string; readonly taskId: string }) =>
  Buffer.from(JSON.stringify([tag, after.waitingSince, after.taskId]), "utf8").toString("base64url")

const decodeCursor = (cursor: string, tag: string): { waitingSince: string; taskId: string } | undefined => {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown
    if (!Array.isArray(v) || v.length !== 3 || v[0] !== tag || typeof v[1] !== "string" || typeof v[2] !== "string") return undefined
    const after = { waitingSince: v[1], taskId: v[2] }
    return encodeCursor(tag, after) === cursor && after.waitingSince.length <= 64 && after.taskId.length <= 64 ? after : undefined
  } catch {
    return undefined
  }
}

/** The caller as the edge names them (actor, groups, whether an identity is configured), and the bound tenant. */
export const whoAmI = Effect.gen(function*() {
  const actor = yield* actorNow
  const identity = yield* currentIdentity
  const tenant = yield* (yield* Tenant).current
  const me: Me = {
    actor: actor ?? null,
    groups: identity.groups,
    identity: identity.enforced ? "edge" : "none",
    tenant: { id: tenant.id, slug: tenant.slug, name: tenant.name }
  }
  return me
})

/**
 * `assignee=me` from a request that names nobody: a 400, not an empty page that reads as "nothing
 * waits for you". Groups come only with a named person (src/gateway/identity.ts), and a step is
 * never assigned to nobody.
 */
const nobodyIsMe = (identity: Identity) =>
  new BadRequest({
    message: `assignee: "me" matches nobody: this request names no one (` +
      (identity.namedBy !== undefined
        ? `the edge names a person in ${identity.namedBy}`
        : "no identity is configured at the edge: SVC_ACTOR_HEADER or SVC_JWT_JWKS") +
      "); name an actor or group:<name>, or leave assignee out"
  })

/** One page of the inbox for the caller of this request. */
export const inboxPage = (params: InboxQueryParams) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const tenant = yield* (yield* Tenant).current
    const { cursor, limit, ...given } = params
    // A UUID in any case names the same entity (the store keeps them lower case).
    const filters = given.entityId === undefined ? given : { ...given, entityId: given.entityId.toLowerCase() }
    if (filters.assignee === "me" && (yield* actorNow) === undefined) return yield* Effect.fail(nobodyIsMe(yield* currentIdentity))
    if (filters.assignee !== undefined && filters.assignee !== "me") {
      const named = groupNameOf(filters.assignee) ?? filters.assignee
      const problem = actorProblem(named, { agentAllowed: true })
      if (problem !== undefined) return yield* Effect.fail(new BadRequest({ message: `assignee: ${problem}` }))
    }
    const tag = filterTag(tenant.id, filters)
    const after = cursor === undefined ? undefined : decodeCursor(cursor, tag)
    if (cursor !== undefined && after === undefined) return yield* Effect.fail(new BadRequest({ message: INBOX_CURSOR_MESSAGE }))
    const query: InboxQuery = {
      ...(filters.awaiting !== undefined ? { awaiting: filters.awaiting } : {}),
      ...(filters.assignee !== undefined ? { assignee: filters.assignee } : {}),
      ...(filters.entityId !== undefined ? { entityId: filters.entityId } : {}),
      ...(filters.workflowId !== undefined ? { workflowId: filters.workflowId } : {}),
      ...(filters.overdue === "true" ? { overdue: true } : {}),
      now: new Date().toISOString(),
      limit: limit ?? INBOX_PAGE_DEFAULT,
      ...(after !== undefined ? { after } : {})
    }
    const slice = yield* workspace.inbox(tenant.id, query)
    const page: InboxPage = {
      items: slice.items,
      ...(slice.more && slice.last !== undefined ? { nextCursor: encodeCursor(tag, slice.last) } : {})
    }
    return page
  })

/** Claims the task's current step for the caller. */
export const claimTask = (taskId: string, override: boolean) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const { tenant } = yield* (yield* Tenant).requireTask(taskId)
    const claim = yield* workspace.claimStep(tenant.id, taskId, override)
    yield* ringAfterSignal(taskId)
    return claim
  })

/** Releases the task's current claim. */
export const releaseTaskClaim = (taskId: string) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const { tenant } = yield* (yield* Tenant).requireTask(taskId)
    yield* workspace.releaseClaim(tenant.id, taskId)
    yield* ringAfterSignal(taskId)
  })
