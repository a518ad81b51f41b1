/**
 * Upstream metrics at the WorkspaceClient port: every call's duration and, when it failed, the
 * kind of failure, per operation (the port's method name). The same numbers for the embedded
 * workspace and for the HTTP client of a remote one; a call's duration includes its retries.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { WorkspaceClient, type WorkspaceClientService } from "../upstream/WorkspaceClient.js"
import { recordWorkspaceCall } from "./metrics.js"

const KINDS: Record<string, string> = {
  NotFound: "not_found",
  BadRequest: "bad_request",
  Conflict: "conflict",
  Unauthorized: "unauthorized",
  ServiceUnavailable: "unavailable",
  BadGateway: "bad_gateway",
  GatewayTimeout: "timeout",
  InternalServerError: "internal"
}

const snake = (tag: string) => tag.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase()

/** The failure kind of a failed call. */
export const failureKind = (cause: Cause.Cause<unknown>): string => {
  if (Cause.hasInterruptsOnly(cause)) return "interrupted"
  const failure = Cause.findErrorOption(cause)
  if (failure._tag === "None") return "defect"
  const tag = (failure.value as { _tag?: unknown } | null)?._tag
  return typeof tag === "string" ? KINDS[tag] ?? snake(tag) : "error"
}

const timed = <A, E, R>(operation: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const started = performance.now()
    return Effect.onExit(effect, (exit) => {
      recordWorkspaceCall(
        operation,
        (performance.now() - started) / 1000,
        Exit.isSuccess(exit) ? undefined : failureKind(exit.cause)
      )
      return Effect.void
    })
  })

/** The same service with every method's calls measured. */
export const instrumentWorkspaceClient = (service: WorkspaceClientService): WorkspaceClientService => {
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(service)) {
    out[name] = typeof value === "function"
      ? (...args: Array<unknown>) => {
        const result = (value as (...a: Array<unknown>) => unknown).apply(service, args)
        return Effect.isEffect(result) ? timed(name, result) : result
      }
      : value
  }
  return out as unknown as WorkspaceClientService
}

/**
 * `layer` with its WorkspaceClient measured; everything else it provides passes through. Built
 * with the current memo map, so a layer `layer` shares with others is still built once.
 */
export const withWorkspaceMetrics = <A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
  Layer.effectContext(Effect.gen(function*() {
    // Always there while layers are built; a fresh map only for a layer built some other way.
    const memoMap = Option.getOrElse(yield* Effect.serviceOption(Layer.CurrentMemoMap), () => Layer.makeMemoMapUnsafe())
    const context = yield* Layer.buildWithMemoMap(layer, memoMap, yield* Effect.scope)
    const service = Context.getOption(context as Context.Context<unknown>, WorkspaceClient)
    return service._tag === "Some"
      ? Context.add(context, WorkspaceClient, instrumentWorkspaceClient(service.value)) as Context.Context<A>
      : context
  }))
