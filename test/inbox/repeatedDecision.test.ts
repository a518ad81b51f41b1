/**
 * A decision sent again on a step already decided that way is one decision (a no-op that answers
 * 2xx), but only for someone who could have taken it: its decider again, or another who passes
 * the step's rules. Someone not assigned, or refused by four-eyes, hears 403 as they would have
 * before the step was decided, not `{ok: true}` for a decision that never counted as theirs.
 * On the built process with an identity at the edge (SVC_ACTOR_HEADER, SVC_GROUPS_HEADER).
 */
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { type BuiltGateway, startBuiltGateway } from "../timeline/support.js"

const FIXTURE = fileURLToPath(new URL("../fixtures/inbox.json", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"

let gw: BuiltGateway

beforeAll(async () => {
  gw = await startBuiltGateway({
    SVC_SEED_FILE: FIXTURE,
    SVC_ACTOR_HEADER: "x-forwarded-email",
    SVC_GROUPS_HEADER: "x-forwarded-groups"
  })
}, 60_000)
afterAll(async () => {
  await gw?.cleanup()
})

const as = (actor: string, groups?: string) => ({
  "x-forwarded-email": actor,
  ...(groups !== undefined ? { "x-forwarded-groups": groups } : {})
})

const approve = (taskId: string, step: string, headers: Record<string, string>) =>
  http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved", step }, headers)

const stepOf = async (taskId: string) => (await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body.step?.id

const deciders = async (taskId: string) =>
  ((await http("GET", `${gw.url}/v1/tasks/${taskId}/events`)).body.events as Array<{ type: string; payload: any }>)
    .filter((e) => e.type === "step.completed")
    .map((e) => `${e.payload.stepId}:${e.payload.actor}`)

describe("a decision repeated on a decided step", () => {
  it("answers 2xx to its decider and to another assignee, 403 to someone not assigned", async () => {
    const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "close" }, as("boss@acme.test"))
    expect(created.status).toBe(201)
    const t = created.body.id as string
    expect((await approve(t, "prepare", as("ann@acme.test"))).status).toBe(200)
    expect(await stepOf(t)).toBe("reconcile")

    // The decider again, in another case, and a member of the step's group: the same decision.
    expect((await approve(t, "prepare", as("ANN@acme.test"))).status).toBe(200)
    expect((await approve(t, "prepare", as("carol@acme.test", "controllers"))).status).toBe(200)
    // Not assigned (before the fix: {"ok":true}).
    const stranger = await approve(t, "prepare", as("mallory@evil.test"))
    expect(stranger.status).toBe(403)
    expect(stranger.body).toMatchObject({ statusCode: 403, error: "Forbidden" })
    expect(stranger.body.message).toContain("mallory@evil.test is not assigned")

    expect(await deciders(t)).toEqual(["prepare:ann@acme.test"])
    expect(await stepOf(t)).toBe("reconcile")
  })

  it("an Idempotency-Key is its caller's: another person sending it is a 409, not the first one's {ok: true}", async () => {
    const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "close" }, as("boss@acme.test"))
    const t = created.body.id as string
    // A key a client derives from the task, as two people's clients may alike.
    const key = { "idempotency-key": `approve-${t}` }
    const decide = (headers: Record<string, string>) =>
      http("POST", `${gw.url}/v1/tasks/${t}/action`, { type: "approved" }, { ...headers, ...key })
    expect((await decide(as("ann@acme.test"))).status).toBe(200)
    // Not assigned, same key and body (before: the stored {"ok":true} replayed to them).
    const stranger = await decide(as("mallory@evil.test"))
    expect(stranger.status).toBe(409)
    expect(stranger.body).toMatchObject({ statusCode: 409, error: "Conflict" })
    expect(stranger.body.message).toContain("Idempotency-Key")
    // The caller's own retry, in any case, still gets its result.
    expect((await decide(as("ann@acme.test"))).body).toEqual({ ok: true })
    expect((await decide(as("Ann@Acme.test"))).body).toEqual({ ok: true })
    expect(await deciders(t)).toEqual(["prepare:ann@acme.test"])
  })

  it("answers 403 to someone four-eyes excludes, though they are assigned", async () => {
    const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "close" }, as("boss@acme.test"))
    const t = created.body.id as string
    expect((await approve(t, "prepare", as("ann@acme.test"))).status).toBe(200)
    expect((await http("POST", `${gw.url}/v1/tasks/${t}/claim`, { override: true }, as("carol@acme.test"))).status).toBe(200)
    const filed = await http("POST", `${gw.url}/v1/tasks/${t}/files/ingest`, {
      source: "recon",
      fileName: "recon.txt",
      fileRef: { provider: "inline_base64", data: Buffer.from("bank ok").toString("base64") },
      signalTaskId: t,
      signalName: "file_submitted"
    }, as("carol@acme.test"))
    expect(filed.status).toBe(201)
    expect(await stepOf(t)).toBe("review")
    // review: group:reviewers, four-eyes. Dan (a reviewer) decides it.
    expect((await approve(t, "review", as("dan@acme.test", "reviewers"))).status).toBe(200)
    // Ann is a reviewer too, but decided "prepare": four-eyes refuses her, before and after.
    const excluded = await approve(t, "review", as("ann@acme.test", "reviewers"))
    expect(excluded.status).toBe(403)
    expect(excluded.body.message).toContain("four-eyes")
    // Dan again: the same decision.
    expect((await approve(t, "review", as("dan@acme.test", "reviewers"))).status).toBe(200)
    expect((await deciders(t)).filter((d) => d.startsWith("review:"))).toEqual(["review:dan@acme.test"])
  })
})
