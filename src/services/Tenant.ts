/**
 * The tenant this process is bound to, resolved from SVC_TENANT_SLUG on first use and cached.
 * A failed resolution is not cached: the next request tries again.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Semaphore from "effect/Semaphore"
import { NotFound, ServiceUnavailable, type UpstreamError } from "../api/errors.js"
import { TenantConfig } from "../config/TenantConfig.js"
import { type Workspace, WorkspaceClient } from "../upstream/WorkspaceClient.js"

export interface TenantService {
  readonly current: Effect.Effect<Workspace.Tenant, UpstreamError>
  /** Drops the cached tenant and resolves it again. */
  readonly refresh: Effect.Effect<Workspace.Tenant, UpstreamError>
  /**
   * The task, if it belongs to this tenant. On a tenantId mismatch the cached tenant is
   * refreshed once before answering 404, exactly like a missing task.
   */
  readonly requireTask: (taskId: string) => Effect.Effect<
    { readonly tenant: Workspace.Tenant; readonly task: Workspace.Task },
    NotFound | UpstreamError
  >
}

export class Tenant extends Context.Service<Tenant, TenantService>()("services/Tenant") {
  static readonly layer = Layer.effect(
    Tenant,
    Effect.gen(function*() {
      const config = yield* TenantConfig
      const workspace = yield* WorkspaceClient
      const cache = yield* Ref.make(Option.none<Workspace.Tenant>())
      const lock = yield* Semaphore.make(1)

      const resolve = Effect.suspend(() => Option.match(config.tenantSlug, {
        onNone: () =>
          Effect.fail(
            new ServiceUnavailable({ message: "This gateway is bound to no tenant: SVC_TENANT_SLUG is not set" })
          ),
        onSome: (slug) =>
          workspace.resolveTenant(slug).pipe(
            Effect.catchTag("NotFound", () =>
              Effect.fail(
                new ServiceUnavailable({ message: `Tenant "${slug}" (SVC_TENANT_SLUG) is not known to the workspace service` })
              )
            ),
            Effect.tap((tenant) => Ref.set(cache, Option.some(tenant)))
          )
      }))

      const current = Effect.flatMap(Ref.get(cache), (cached) =>
        Option.isSome(cached)
          ? Effect.succeed(cached.value)
          // One resolution at a time; callers that waited find the cache filled.
          : lock.withPermits(1)(
            Effect.flatMap(Ref.get(cache), (again) => Option.isSome(again) ? Effect.succeed(again.value) : resolve)
          ))

      const refresh = lock.withPermits(1)(Effect.andThen(Ref.set(cache, Option.none()), resolve))

      const notFound = (taskId: string) => new NotFound({ message: `Task ${taskId} not found` })

      const requireTask: TenantService["requireTask"] = (taskId) =>
        Effect.gen(function*() {
          const task = yield* workspace.getTask(taskId).pipe(Effect.mapError((e) => e._tag === "NotFound" ? notFound(taskId) : e))
          let tenant = yield* current
          if (task.tenantId !== tenant.id) {
            tenant = yield* refresh
            if (task.tenantId !== tenant.id) return yield* Effect.fail(notFound(taskId))
          }
          return { tenant, task }
        })

      return { current, refresh, requireTask }
    })
  )
}
