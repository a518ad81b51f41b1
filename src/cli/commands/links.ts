/**
 * links create / revoke: decision links (README "Decision links") over the admin listener
 * (--admin-url, SVC_ADMIN_TOKEN), like `svc agents`. The gateway makes them only under an
 * explicit SVC_PUBLIC_URL; without it the command fails with the gateway's reason.
 */
import * as Flag from "effect/cli/Flag"
import * as Argument from "effect/cli/Argument"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { parseLinkTtl } from "../../domain/links.js"
import { fields, group, line, note, registryCommand, taskIdArg, usage } from "../common.js"

const create = registryCommand(
  "create",
  "Make an approve and a reject link for one person on a task's current approval step; prints both URLs and the expiry",
  {
    taskId: taskIdArg,
    actor: Flag.String("actor").pipe(Flag.optional, Flag.withDescription("Required: the person the links decide as (their e-mail; before the command, --actor is the gateway's)")),
    tenant: Flag.String("tenant").pipe(Flag.optional, Flag.withDescription("Required: the task's tenant, by slug")),
    expiresIn: Flag.String("expires-in").pipe(Flag.optional, Flag.withDescription("ISO 8601 duration, default PT72H, at most P30D"))
  },
  (args, ctx) =>
    Effect.gen(function*() {
      const missing = [["--actor", args.actor], ["--tenant", args.tenant]] as const
      if (Option.isNone(args.actor) || Option.isNone(args.tenant)) {
        return yield* usage(
          missing.filter(([, value]) => Option.isNone(value)).map(([flag]) => `missing flag ${flag}`).join("; ")
        )
      }
      // Checked here too, so a typo is a usage error before anything is sent.
      if (Option.isSome(args.expiresIn)) {
        const ttl = parseLinkTtl(args.expiresIn.value)
        if ("problem" in ttl) return yield* usage(`--expires-in: ${ttl.problem}`)
      }
      const links = yield* ctx.registry.registry.createDecisionLinks({
        payload: {
          tenantSlug: args.tenant.value,
          taskId: args.taskId,
          actor: args.actor.value,
          ...(Option.isSome(args.expiresIn) ? { expiresIn: args.expiresIn.value } : {})
        }
      })
      if (ctx.json) return yield* line(JSON.stringify(links, null, 2))
      yield* fields([
        ["Task", links.taskId],
        ["Step", `${links.stepId}: ${links.stepTitle}`],
        ["For", links.actor],
        ["Expires", links.expiresAt],
        ["Approve", links.approveUrl],
        ["Reject", links.rejectUrl]
      ])
      yield* note(
        `Send both links to ${links.actor} only: either one decides once, as them. Opening one changes nothing until they confirm on its page.`
      )
    })
)

const revoke = registryCommand(
  "revoke",
  "End a task's or a person's decision links now (both: that person's links on that task)",
  {
    taskId: Argument.String("taskId").pipe(Argument.optional, Argument.withDescription("Only this task's links")),
    actor: Flag.String("actor").pipe(Flag.optional, Flag.withDescription("Only this person's links")),
    tenant: Flag.String("tenant").pipe(Flag.optional, Flag.withDescription("Required: the tenant, by slug"))
  },
  (args, ctx) =>
    Effect.gen(function*() {
      if (Option.isNone(args.tenant)) return yield* usage("Expected to find option: '--tenant'")
      if (Option.isNone(args.taskId) && Option.isNone(args.actor)) return yield* usage("give a <taskId>, --actor <email>, or both")
      const result = yield* ctx.registry.registry.revokeDecisionLinks({
        payload: {
          tenantSlug: args.tenant.value,
          ...(Option.isSome(args.taskId) ? { taskId: args.taskId.value } : {}),
          ...(Option.isSome(args.actor) ? { actor: args.actor.value } : {})
        }
      })
      yield* ctx.output(result, (r) =>
        line(
          `Revoked ${r.revoked} link pair${r.revoked === 1 ? "" : "s"}` +
            (r.deciding !== undefined && r.deciding > 0
              ? `; ${r.deciding} ${r.deciding === 1 ? "was" : "were"} deciding at that moment: that decision may stand`
              : "")
        ))
    })
)

export const links = group(
  "links",
  "Decision links: approve or reject a waiting step from a message, on the admin listener (--admin-url / SVC_ADMIN_URL; SVC_ADMIN_TOKEN sent as bearer token)",
  [create, revoke]
)
