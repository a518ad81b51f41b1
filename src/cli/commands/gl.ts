/** gl status / connect / disconnect. */
import * as Flag from "effect/cli/Flag"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { GlStatus } from "../../api/resources.js"
import { booleanFlag, CliFailure, fields, floatFlag, gatewayCommand, group, line, note, usage } from "../common.js"

const renderStatus = (s: GlStatus) =>
  fields([
    ["Connected", s.connected ? "yes" : "no"],
    ["Tenant", s.tenantId],
    ...(s.provider !== undefined ? [["Provider", s.provider] as const] : []),
    ...(s.service !== undefined ? [["Service", s.service] as const] : []),
    ...(s.status !== undefined ? [["Status", s.status] as const] : []),
    ...(s.workspaceName !== undefined ? [["Workspace", s.workspaceName] as const] : []),
    ...(s.lastSyncAt !== undefined ? [["Last sync", s.lastSyncAt] as const] : [])
  ])

const status = gatewayCommand("status", "Show the tenant's GL connection", {}, (_, ctx) =>
  Effect.flatMap(ctx.gateway.gl.glStatus(), (s) => ctx.output(s, renderStatus)))

const connect = gatewayCommand(
  "connect",
  "Start a GL connect session: prints the URL to open, then waits until the connection is active",
  {
    service: Flag.String("service").pipe(Flag.optional, Flag.withDescription("Preselect a provider service")),
    timeout: floatFlag("timeout").pipe(Flag.withDefault(300), Flag.withDescription("Seconds to wait (default 300); exit 1 when they pass first")),
    interval: floatFlag("interval").pipe(Flag.withDefault(2), Flag.withDescription("Seconds between status polls (default 2)")),
    noWait: booleanFlag("no-wait").pipe(Flag.withDescription("Print the session URL and return"))
  },
  ({ interval, noWait, service, timeout }, ctx) =>
    Effect.gen(function*() {
      if (timeout <= 0 || interval <= 0) return yield* usage("--timeout and --interval must be positive numbers of seconds")
      const before = yield* ctx.gateway.gl.glStatus()
      const session = yield* ctx.gateway.gl.glConnectSession({
        payload: Option.match(service, { onNone: () => ({}), onSome: (serviceId) => ({ serviceId }) })
      })
      if (ctx.json) yield* line(JSON.stringify(session))
      else {
        yield* line(session.sessionUrl)
        yield* note(`Open the URL above to connect the general ledger (session ${session.consumerId}).`)
      }
      if (noWait) return
      if (!ctx.json) {
        yield* note(
          before.connected
            ? `Already connected (${before.service ?? before.provider ?? "?"}); waiting up to ${timeout}s for this session to replace it...`
            : `Waiting up to ${timeout}s for the connection...`
        )
      }
      // Done when connected by this session: with a connection already there, when it changes.
      const isNew = (s: GlStatus) =>
        s.connected &&
        (!before.connected || s.lastSyncAt !== before.lastSyncAt || s.service !== before.service || s.provider !== before.provider)
      const poll = Effect.gen(function*() {
        while (true) {
          const s = yield* ctx.gateway.gl.glStatus()
          if (isNew(s)) return s
          yield* Effect.sleep(Duration.seconds(interval))
        }
      })
      const connected = yield* Effect.timeoutOption(poll, Duration.seconds(timeout))
      if (Option.isNone(connected)) {
        return yield* new CliFailure({ message: `timed out after ${timeout}s waiting for connect session ${session.consumerId} to complete` })
      }
      if (ctx.json) yield* line(JSON.stringify(connected.value))
      else {
        yield* line("Connected.")
        yield* renderStatus(connected.value)
      }
    })
)

const disconnect = gatewayCommand("disconnect", "Remove the tenant's GL connection (a no-op when there is none)", {}, (_, ctx) =>
  Effect.andThen(ctx.gateway.gl.glDisconnect(), ctx.output({ ok: true }, () => line("GL connection removed."))))

export const gl = group("gl", "The tenant's general-ledger connection", [status, connect, disconnect])
