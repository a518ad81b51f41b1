/**
 * Readiness, beside liveness. `/v1/health` says the process is up (the spec's health, no tenant
 * needed); `GET /readyz` says this cell can serve its tenant now:
 *
 * - 200 `{"status":"ready"}` when the process is not draining, the tenant of SVC_TENANT_SLUG
 *   resolves, and the upstream workspace (embedded store or workspace service) answers;
 * - 503 in the error shape otherwise, the message saying why: draining (shutting down), no
 *   SVC_TENANT_SLUG, a tenant the workspace does not know (naming SVC_TENANT_SLUG), or an
 *   upstream that is unreachable, failing or slower than READINESS_TIMEOUT_MS.
 *
 * The upstream check (one tenant lookup) is cached for READINESS_CACHE_MS, failures included,
 * and concurrent probes share one lookup: probes cannot hammer the workspace. Draining is
 * read on every probe, uncached.
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { TenantConfig } from "../config/TenantConfig.js"
import { WorkspaceClient } from "../upstream/WorkspaceClient.js"
import { ProcessDrain } from "../lib/ProcessDrain.js"

/** How long one upstream check's verdict is reused. */
export const READINESS_CACHE_MS = 1_000
/** How long one upstream check may take before it counts as "not answering". */
export const READINESS_TIMEOUT_MS = 2_000

export type ReadinessVerdict =
  | { readonly ready: true }
  /** `reason`: why not, e.g. `tenant "x" (SVC_TENANT_SLUG) is not known to the embedded workspace`. */
  | { readonly ready: false; readonly reason: string }

export interface ReadinessService {
  /** The verdict now (the upstream part cached for READINESS_CACHE_MS). */
  readonly check: Effect.Effect<ReadinessVerdict>
}

export class Readiness extends Context.Service<Readiness, ReadinessService>()("gateway/Readiness") {
  /** Needs TenantConfig and WorkspaceClient; reads the process's drain when one is provided. */
  static readonly layer = Layer.effect(
    Readiness,
    Effect.gen(function*() {
      const config = yield* TenantConfig
      const workspace = yield* WorkspaceClient
      const drain = yield* Effect.serviceOption(ProcessDrain)
      const upstreamName = Option.match(config.workspaceUrl, {
        onNone: () => "the embedded workspace",
        onSome: (url) => `the workspace service at ${url} (SVC_WORKSPACE_URL)`
      })

      const lookup: Effect.Effect<ReadinessVerdict> = Option.match(config.tenantSlug, {
        onNone: () =>
          Effect.succeed<ReadinessVerdict>({
            ready: false,
            reason: "this gateway is bound to no tenant (SVC_TENANT_SLUG is not set)"
          }),
        onSome: (slug) =>
          workspace.resolveTenant(slug).pipe(
            Effect.timeoutOrElse({
              duration: Duration.millis(READINESS_TIMEOUT_MS),
              orElse: () => Effect.fail({ _tag: "ReadinessTimeout" as const, message: "" })
            }),
            Effect.result,
            Effect.map(Result.match({
              onSuccess: (): ReadinessVerdict => ({ ready: true }),
              onFailure: (e): ReadinessVerdict => ({
                ready: false,
                reason: e._tag === "NotFound"
                  ? `tenant "${slug}" (SVC_TENANT_SLUG) is not known to ${upstreamName}`
                  : e._tag === "ReadinessTimeout"
                  ? `${upstreamName} did not answer within ${READINESS_TIMEOUT_MS} ms`
                  : `${upstreamName} is unreachable or failing: ${e.message}`
              })
            })),
            // A defect in the port is not a reason to crash the probe: it is a failing upstream.
            Effect.catchDefect((defect) =>
              Effect.succeed<ReadinessVerdict>({
                ready: false,
                reason: `${upstreamName} is failing: ${defect instanceof Error ? defect.message : String(defect)}`
              })
            )
          )
      })
      const cached = yield* Effect.cachedWithTTL(lookup, Duration.millis(READINESS_CACHE_MS))

      const draining = Option.match(drain, { onNone: () => () => false, onSome: (d) => () => d.draining })
      return {
        check: Effect.suspend(() =>
          draining()
            ? Effect.succeed<ReadinessVerdict>({ ready: false, reason: "shutting down (draining)" })
            : cached
        )
      }
    })
  )
}
