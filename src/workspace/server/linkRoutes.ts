/**
 * Decision links on the gateway's port (README "Decision links"): `GET /links/<token>` (and
 * HEAD) answers the link's page and changes nothing; only `POST /links/<token>` with a JSON body
 * (`{}` or `{"comments": "..."}`), from the page itself, decides, once, as the link's person.
 *
 * The decision goes through the same path as POST /v1/tasks/:taskId/action (decideTask: arrival
 * binding, the step named, four-eyes and every other rule of that path), bound to the link's
 * step and run as the link's actor, marked `via: "link"`. The pair is claimed first and marked
 * used after the decision; a decision that is refused lets the claim go, so it changes nothing.
 *
 * Answers: a token that is malformed, altered, cut short, signed with a key no longer held or
 * of another tenant: 404, like any missing record; revoked, used (either link of the pair) or
 * expired: 410; a step that has moved on: 409; an edge that names someone other than the
 * link's person: 403. On a step that requires a claim, the decision claims it for the link's
 * person when nobody holds it (they cannot claim from a message), in the decision's transaction;
 * a claim another holds: 409 naming them, the link still usable. Pages say why in words; POSTs (and GETs asking for JSON) in the spec's
 * error shape.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { LinkDecisionDto, PAYLOAD_PARSE_OPTIONS } from "../../api/dtos.js"
import { BadRequest, Conflict, Forbidden, NotFound } from "../../api/errors.js"
import { LINK_PATH } from "../../api/linkPath.js"
import { completedAtOf, deciderOf, decisionOf, personKey } from "../../domain/engine.js"
import type { LinkDecision } from "../../domain/links.js"
import { crossSiteRefusal } from "../../http/input/crossSite.js"
import { errorResponse } from "../../http/errors/errorBody.js"
import { describeIssues } from "../../http/errors/errorMessages.js"
import type { Route } from "../../http/errors/unrouted.js"
import { actorNow, withActor } from "../../services/Actor.js"
import { decideTask } from "../../services/tasks.js"
import { Tenant } from "../../services/Tenant.js"
import { WorkspaceClient } from "../../upstream/WorkspaceClient.js"
import { EmbeddedWorkspace } from "../embedded/layer.js"
import type { LinkLookup, OpenedLink } from "../embedded/links.js"
import { LINK_PAGE_CSP, linkConfirmPage, type LinkPageTask, linkProblemPage } from "./linkPage.js"

/** A link's page and answers: never cached, framed, indexed, or leaked in a Referer. */
const PAGE_HEADERS = {
  "cache-control": "no-store",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-robots-tag": "noindex, nofollow",
  "content-security-policy": LINK_PAGE_CSP
}
const JSON_HEADERS = { "cache-control": "no-store", "referrer-policy": "no-referrer", "x-robots-tag": "noindex, nofollow" }

/**
 * The page's body: `{}` or `{"comments": "..."}` (no body reads as `{}`), by POST /action's own
 * rule for comments (LinkDecisionDto); anything else a 400 naming the body or the field.
 */
const decodeLinkBody = Schema.decodeUnknownEffect(LinkDecisionDto, PAYLOAD_PARSE_OPTIONS)
const bodyOf = (value: unknown) =>
  value === undefined
    ? Effect.succeed({} as typeof LinkDecisionDto.Type)
    : typeof value !== "object" || value === null || Array.isArray(value)
    ? Effect.fail(new BadRequest({ message: "The body must be a JSON object: {} or {\"comments\": \"...\"}" }))
    : Effect.mapError(decodeLinkBody(value), (e) => new BadRequest({ message: describeIssues(e) }))

/** 410: the link existed and no longer works (used, revoked, expired). */
export class Gone extends Schema.TaggedError<Gone>()("Gone", {
  statusCode: Schema.tag(410),
  error: Schema.tag("Gone"),
  message: Schema.String
}) {}

const DECIDED: Readonly<Record<LinkDecision, "approved" | "rejected">> = { approve: "approved", reject: "rejected" }

/** Why a link does not work, as a status and the words its page and its JSON say. */
interface Problem {
  readonly status: number
  readonly error: string
  readonly title: string
  readonly message: string
}

const problemOf = (lookup: Exclude<LinkLookup, { _tag: "Open" }>): Problem => {
  switch (lookup._tag) {
    case "Unknown":
      return {
        status: 404,
        error: "Not Found",
        title: "This link does not work",
        message: "This is not a decision link of this gateway, or it was altered or cut short: open the whole link from your message."
      }
    case "Revoked":
      return { status: 410, error: "Gone", title: "This link was withdrawn", message: "This decision link was revoked; ask for a new one if the step still waits." }
    case "Used":
      return {
        status: 410,
        error: "Gone",
        title: "This decision was already made",
        message: `This link pair was already used: the step was ${DECIDED[lookup.usedDecision]} with it at ${lookup.usedAt}. A link decides once.`
      }
    case "Expired":
      return {
        status: 410,
        error: "Gone",
        title: "This link has expired",
        message: `This decision link worked until ${lookup.link.expiresAt}; ask for a new one if the step still waits.`
      }
  }
}

/** How a step was completed, from the task's snapshots: undefined for a step never completed. */
interface StepOutcome {
  readonly decision?: "approved" | "rejected" | undefined
  readonly by?: string | undefined
  readonly at?: string | undefined
}

const outcomeOf = (snapshots: Record<string, unknown>, stepId: string): StepOutcome | undefined =>
  Object.prototype.hasOwnProperty.call(snapshots, stepId)
    ? { decision: decisionOf(snapshots, stepId, []), by: deciderOf(snapshots[stepId]), at: completedAtOf(snapshots[stepId]) }
    : undefined

/**
 * 409: the link's step is no longer current. Who completed it, how and when, as its record says
 * (two people's links confirmed at once: the later one learns who decided, and when, as the 409 of
 * a decision beaten in the same moment says), else why it may be.
 */
const movedOn = (stepTitle: string, now: string, outcome: StepOutcome | undefined): Problem => {
  const how = outcome?.decision ?? "completed"
  const decided = outcome === undefined
    ? "it was decided another way, or the task moved on"
    : `it was already ${how}${outcome.by !== undefined ? ` by ${outcome.by}` : ""}${outcome.at !== undefined ? ` at ${outcome.at}` : ""}`
  return {
    status: 409,
    error: "Conflict",
    title: "This step has moved on",
    message: `The task is no longer at step “${stepTitle}” (${now}): ${decided}.`
  }
}

const otherPerson = (actor: string): Problem => ({
  status: 403,
  error: "Forbidden",
  title: "This link is for someone else",
  message: `This decision link is for ${actor}, and you are signed in as someone else: open it signed in as ${actor}.`
})

/** The methods and paths DecisionLinkRoutes serves (HEAD with GET). */
export const DECISION_LINK_ROUTES: ReadonlyArray<Route> = [
  { method: "GET", path: `${LINK_PATH}/:token` },
  { method: "POST", path: `${LINK_PATH}/:token` }
]

/** Whether the request asks for JSON rather than a page (scripts, the page's own POST). */
const wantsJson = (request: HttpServerRequest.HttpServerRequest) => {
  const accept = request.headers["accept"] ?? ""
  return /application\/json/i.test(accept) && !/text\/html/i.test(accept)
}

const tokenParam = Effect.map(HttpRouter.params, (params) => params.token ?? "")

export const DecisionLinkRoutes = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const store = yield* EmbeddedWorkspace
    const workspace = yield* WorkspaceClient
    const tenants = yield* Tenant
    const withServices = <A, E, R>(self: Effect.Effect<A, E, R>) =>
      self.pipe(Effect.provideService(WorkspaceClient, workspace), Effect.provideService(Tenant, tenants))

    /** The task as the page names it, and the task's current step now. */
    const taskOf = (link: OpenedLink) =>
      Effect.gen(function*() {
        let task = yield* workspace.getTask(link.taskId)
        const next = yield* workspace.getNextStep(link.tenantId, link.taskId)
        const entity = yield* Effect.option(workspace.getEntity(link.tenantId, task.entityId))
        const step = next.step
        const titleOf = (id: string) => (step !== null && step.id === id ? step.title : next.steps.find((s) => s.id === id)?.title) ?? id
        const atLinkStep = step !== null && step.id === link.stepId
        const view: LinkPageTask = {
          taskId: task.id,
          taskTitle: task.title,
          entityName: Option.getOrUndefined(Option.map(entity, (e) => e.name)),
          stepTitle: titleOf(link.stepId),
          args: atLinkStep ? step.args : {}
        }
        const current = task.currentStep === link.stepId && atLinkStep
        // The task was read before a decision was applied and its next step after: read it again,
        // or the page says the task left the step for that same step ("now at" its own id).
        if (!current && task.currentStep === link.stepId) task = yield* workspace.getTask(link.taskId)
        return { view, current, now: task.currentStep === null ? `the task is ${task.status}` : `now at “${titleOf(task.currentStep)}”` }
      })

    /** The link's state now, and for an open one its task, its person check and whether its step is still current. */
    const inspect = (token: string) =>
      Effect.gen(function*() {
        const tenant = yield* tenants.current
        const lookup = yield* store.openDecisionLink(tenant.id, token)
        if (lookup._tag !== "Open") return { _tag: "Problem" as const, problem: problemOf(lookup), task: undefined, link: undefined }
        const link = lookup.link
        const { current, now, view } = yield* taskOf(link)
        if (!current) {
          const outcome = yield* workspace.getSnapshots(link.tenantId, link.taskId).pipe(
            Effect.map((snapshots) => outcomeOf(snapshots, link.stepId)),
            Effect.catchTag("NotFound", () => Effect.succeed(undefined))
          )
          return { _tag: "Problem" as const, problem: movedOn(view.stepTitle, now, outcome), task: view, link }
        }
        // Behind a login the edge names who opened it: it must be the link's person.
        const edge = yield* actorNow
        if (edge !== undefined && personKey(edge) !== personKey(link.actor)) {
          return { _tag: "Problem" as const, problem: otherPerson(link.actor), task: undefined, link: undefined }
        }
        return { _tag: "Open" as const, link, task: view }
      })

    const page = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const json = wantsJson(request)
      const found = yield* inspect(yield* tokenParam)
      if (found._tag === "Problem") {
        const p = found.problem
        return json
          ? errorResponse(p.status, p.error, p.message, JSON_HEADERS)
          : HttpServerResponse.html(linkProblemPage(p.title, p.message, found.task, found.link?.actor)).pipe(
            HttpServerResponse.setStatus(p.status),
            HttpServerResponse.setHeaders(PAGE_HEADERS)
          )
      }
      const { link, task } = found
      return json
        ? HttpServerResponse.jsonUnsafe(
          { taskId: link.taskId, stepId: link.stepId, stepTitle: task.stepTitle, decision: link.decision, actor: link.actor, expiresAt: link.expiresAt },
          { headers: JSON_HEADERS }
        )
        : HttpServerResponse.html(linkConfirmPage(link.decision, task, link.actor, link.expiresAt)).pipe(
          HttpServerResponse.setHeaders(PAGE_HEADERS)
        )
    }).pipe(
      // Store or tenant trouble: a page that says so (the JSON answer keeps the error's own status).
      Effect.catch((e) =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          Effect.succeed(
            wantsJson(request)
              ? errorResponse(e.statusCode, e.error, e.message, JSON_HEADERS)
              : HttpServerResponse.html(linkProblemPage("This link cannot be opened now", `${e.message}. Try again in a moment.`)).pipe(
                HttpServerResponse.setStatus(e.statusCode),
                HttpServerResponse.setHeaders(PAGE_HEADERS)
              )
          )))
    )

    /**
     * The 409 for a pair held by a decision under way: this link's own (the same link posted
     * twice at once), the other link's, or one not known (a claim taken by an older process).
     */
    const decidingNow = (mine: LinkDecision, deciding: LinkDecision | undefined): Problem => ({
      status: 409,
      error: "Conflict",
      title: "",
      message: deciding === mine
        ? "This link is being used right now: another request with it is deciding; a link decides once"
        : deciding !== undefined
        ? `The other link of this pair (${deciding}) is deciding right now; a link decides once`
        : "A link of this pair is deciding right now; a link decides once"
    })

    const fail = (p: Problem) =>
      Effect.fail(
        p.status === 404
          ? new NotFound({ message: p.message })
          : p.status === 403
          ? new Forbidden({ message: p.message })
          : p.status === 409
          ? new Conflict({ message: p.message })
          : new Gone({ message: p.message })
      )

    const decide = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      // Only the page itself: no origin is allowed here, not even one SVC_CORS_ORIGINS lists.
      const refusal = crossSiteRefusal(request.method, request.headers, () => false, "a decision link decides only from its own page")
      if (refusal !== undefined) return yield* Effect.fail(new Forbidden({ message: refusal }))
      const body = yield* bodyOf(yield* request.json.pipe(Effect.orElseSucceed(() => undefined)))
      const found = yield* inspect(yield* tokenParam)
      if (found._tag === "Problem") return yield* fail(found.problem)
      const { link } = found
      const token = yield* tokenParam
      const decided = decideTask(
        link.taskId,
        { type: DECIDED[link.decision], step: link.stepId, ...(body.comments !== undefined && body.comments !== "" ? { comments: body.comments } : {}) },
        "link"
      ).pipe(withActor(link.actor), withServices)
      // From the claim to its release or completion, not interruptible: a client that resets
      // its connection right after posting interrupted the request between the claim's commit
      // and the release, and the pair answered "deciding right now" for a minute with nothing
      // decided. The decision the client posted is carried through, or refused, all the same.
      yield* Effect.uninterruptible(Effect.gen(function*() {
        if (!(yield* store.claimDecisionLink(link.pairId, link.decision))) {
          // Used (or revoked) meanwhile, or another request of the pair is deciding right now:
          // with this very link (sent twice) or with the other one.
          const again = yield* store.openDecisionLink(link.tenantId, token)
          return yield* fail(again._tag === "Open" ? decidingNow(link.decision, again.deciding) : problemOf(again))
        }
        yield* Effect.onError(decided, () => Effect.ignore(store.releaseDecisionLink(link.pairId)))
        yield* store.completeDecisionLink(link.pairId, link.decision)
      }))
      return HttpServerResponse.jsonUnsafe(
        { ok: true, decision: DECIDED[link.decision], taskId: link.taskId, stepId: link.stepId, actor: link.actor },
        { headers: JSON_HEADERS }
      )
    }).pipe(
      // Every refusal in the spec's error shape (503s with Retry-After, as everywhere).
      Effect.catch((e) =>
        Effect.succeed(errorResponse(e.statusCode, e.error, e.message, e.statusCode === 503 ? { ...JSON_HEADERS, "retry-after": "1" } : JSON_HEADERS))
      )
    )

    // Any other method: the gateway's 405 from DECISION_LINK_ROUTES, the token not quoted.
    yield* router.add("GET", `${LINK_PATH}/:token`, page)
    yield* router.add("POST", `${LINK_PATH}/:token`, decide)
  })
)
