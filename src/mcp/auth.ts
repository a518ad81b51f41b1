/**
 * Agent authentication at the tool server: `Authorization: Bearer <agent API key>` on every
 * request. The key is hashed here (SHA-256, src/domain/apiKeys.ts) and the tenant's agent
 * holding that hash is looked up through the workspace (WorkspaceClient.findAgentByKeyHash,
 * which compares hashes in constant time). A missing or malformed header, an unknown or
 * deleted key and another tenant's agent's key all fail alike. The key itself is never logged,
 * never stored and never passed on.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type UpstreamError } from "../api/errors.js"
import { Tenant } from "../services/Tenant.js"
import { type Workspace, WorkspaceClient } from "../upstream/WorkspaceClient.js"
import { hashApiKey } from "../domain/apiKeys.js"
import { bearerCredential } from "../http/input/bearerCredential.js"
import type { Agent } from "../upstream/registry.js"

/** Longest key accepted (registry keys are 46 characters); longer ones are not even hashed. */
export const MAX_KEY_LENGTH = 512

/** RFC 6750 b64token, the credential syntax of a bearer token. */
const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/

/** The bearer credential of an Authorization header, if it is one. */
export const bearerToken = (header: string | undefined): Option.Option<string> => {
  const token = bearerCredential(header)
  return token !== undefined && token.length <= MAX_KEY_LENGTH && TOKEN.test(token) ? Option.some(token) : Option.none()
}

/** Why a request is not authenticated: no credential at all, or one that names no agent of this tenant. */
export type AuthFailure = { readonly _tag: "Missing" } | { readonly _tag: "Invalid" }

export interface Authenticated {
  readonly agent: Agent
  readonly tenant: Workspace.Tenant
}

/** The calling agent, or why not. Upstream trouble (the workspace unreachable) fails as itself. */
export const authenticate = (
  authorization: string | undefined
): Effect.Effect<Authenticated, AuthFailure | UpstreamError, Tenant | WorkspaceClient> =>
  Effect.gen(function*() {
    const token = bearerToken(authorization)
    if (Option.isNone(token)) {
      return yield* Effect.fail<AuthFailure>(authorization === undefined ? { _tag: "Missing" } : { _tag: "Invalid" })
    }
    const tenant = yield* (yield* Tenant).current
    const workspace = yield* WorkspaceClient
    const agent = yield* workspace.findAgentByKeyHash(tenant.id, hashApiKey(token.value)).pipe(
      Effect.catchTag("NotFound", () => Effect.fail<AuthFailure>({ _tag: "Invalid" }))
    )
    return { agent, tenant }
  })
