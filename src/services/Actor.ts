/**
 * Who is acting for the current request, as the edge names them (the actor header or a
 * verified JWT claim, src/gateway/identity.ts) or as the agent tool server knows them
 * (`agent:<uuid>`). Undefined when nothing names anyone: the gateway never guesses.
 *
 * Held in a Context.Reference (fiber-local, set with Effect.provideService) so that every write made while serving the request (the embedded store
 * runs in the request's fiber; the HTTP workspace client forwards it as `x-svc-actor`) can
 * record it in the task's timeline.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { CurrentRequest } from "../observability/requestContext.js"

/** The header the gateway sends the actor on to an HTTP workspace (admin-token protected there). */
export const ACTOR_FORWARD_HEADER = "x-svc-actor"

/** Longest actor accepted from any source; longer values are refused (400/401), never cut. */
export const MAX_ACTOR_LENGTH = 256

export const currentActor: Context.Reference<string | undefined> = Context.Reference<string | undefined>("services/currentActor", {
  defaultValue: () => undefined
})

/** Runs `self` on behalf of `actor` (undefined leaves whoever is already named). */
export const withActor = (actor: string | undefined) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  actor === undefined ? self : Effect.provideService(self, currentActor, actor)

/** The actor of the current request, if one is named. */
export const actorNow: Effect.Effect<string | undefined> = currentActor

/**
 * What the edge says besides the actor: the groups it names (SVC_GROUPS_HEADER or
 * SVC_JWT_GROUPS_CLAIM) and whether an identity is configured at all, which is what makes step
 * assignment hold (src/domain/assignment.ts). Default: no groups, not enforced.
 */
export interface Identity {
  readonly groups: ReadonlyArray<string>
  readonly enforced: boolean
  /** How the edge names a person ("header x-forwarded-email"), to tell a request that names nobody. */
  readonly namedBy?: string | undefined
}

export const NO_IDENTITY: Identity = { groups: [], enforced: false }

export const currentIdentity: Context.Reference<Identity> = Context.Reference<Identity>("services/currentIdentity", {
  defaultValue: () => NO_IDENTITY
})

/** Runs `self` with the edge's groups and assignment enforcement. */
export const withIdentity = (identity: Identity) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(self, currentIdentity, identity)

/** The header the gateway sends the identity (groups, enforcement) on to an HTTP workspace. */
export const IDENTITY_FORWARD_HEADER = "x-svc-identity"

/** Who acts, which request, and when it arrived: what a write records and binds its decision to. */
export interface Attribution {
  readonly actor: string | undefined
  /** The edge's groups of the actor. */
  readonly groups?: ReadonlyArray<string> | undefined
  /** Whether step assignment holds for this request (an identity is configured). */
  readonly enforced?: boolean | undefined
  readonly requestId: string | undefined
  /** When the request arrived (src/observability/requestContext.ts), if this runs for one. */
  readonly arrivedAt: number | undefined
  /** Whether another process (a gateway in front of this workspace) stamped `arrivedAt`. */
  readonly arrivalForwarded?: boolean | undefined
}

/** The attribution of the request this fiber serves (all undefined outside a request). */
export const attributionNow: Effect.Effect<Attribution> = Effect.zipWith(
  Effect.zip(actorNow, currentIdentity),
  Effect.serviceOption(CurrentRequest),
  ([actor, identity], request) =>
    Option.isNone(request)
      ? { actor, groups: identity.groups, enforced: identity.enforced, requestId: undefined, arrivedAt: undefined }
      : { actor, groups: identity.groups, enforced: identity.enforced, requestId: request.value.requestId, arrivedAt: request.value.arrivedAt,
        arrivalForwarded: request.value.arrivalForwarded }
)
