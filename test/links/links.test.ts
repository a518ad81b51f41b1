/**
 * Decision links on the built process (README "Decision links"): made over the admin listener
 * (`svc links create`), opened by scanners and people, decided once by the page's own POST, as
 * the link's person, under the step's rules; and the attack cases: scanners' GET/HEAD/prefetch,
 * replay, the pair's other link, forgery, tampering and truncation, expiry, another tenant's
 * link, four-eyes, another person behind a login, other sites.
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signLink } from "../../src/domain/links.js"
import { svc } from "../cli/harness.js"
import { http, type RunningService, startBuilt } from "../support/process.js"
import { ACME, acmeTask, CFO_TASK, GLOBEX_TASK, writeWorld } from "./world.js"

/** Where people reach the gateway (a proxy in front): links are made under it. */
const PUBLIC = "https://approvals.example.test/acme"
const ADMIN_TOKEN = randomBytes(24).toString("base64url")

let dir = ""
let gw: RunningService

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "links-"))
  gw = await startBuilt({
    SVC_TENANT_SLUG: "acme",
    SVC_DATABASE_URL: `file:${join(dir, "w.db")}`,
    SVC_SEED_FILE: writeWorld(dir),
    SVC_PUBLIC_URL: PUBLIC,
    SVC_ADMIN_TOKEN: ADMIN_TOKEN,
    // Behind a login the edge names people; the link route may also be left open (no header).
    SVC_ACTOR_HEADER: "x-forwarded-email",
    // A site that may call /v1 from the browser: it still may not post a link's decision.
    SVC_CORS_ORIGINS: "https://app.example.test"
  })
}, 60_000)
afterAll(async () => {
  await gw?.stop()
  rmSync(dir, { recursive: true, force: true })
})

interface Links {
  readonly taskId: string
  readonly stepId: string
  readonly actor: string
  readonly expiresAt: string
  readonly approveUrl: string
  readonly rejectUrl: string
}

const admin = (path: string, body: unknown) =>
  http("POST", `${gw.adminUrl}/workspace${path}`, body, { authorization: `Bearer ${ADMIN_TOKEN}` })

const makeLinks = async (taskId: string, actor: string, extra: Record<string, unknown> = {}): Promise<Links> => {
  const res = await admin("/links", { tenantSlug: "acme", taskId, actor, ...extra })
  expect(res.status, res.text).toBe(201)
  return res.body as Links
}

/** A link's URL on the process under test (the public URL's proxy, in effect). */
const local = (url: string) => {
  expect(url.startsWith(`${PUBLIC}/links/`)).toBe(true)
  return gw.url + url.slice(PUBLIC.length)
}

/** The status line's code of a request written as these bytes on a connection of its own. */
const statusOfRaw = (raw: string) =>
  new Promise<number>((resolve, reject) => {
    const { hostname, port } = new URL(gw.url)
    const socket = connect(Number(port), hostname, () => socket.end(raw))
    let head = ""
    socket.on("data", (chunk: Buffer) => (head += chunk.toString("latin1")))
    socket.on("error", reject)
    socket.on("close", () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0)))
  })

/** What the page's script sends: a same-origin JSON POST. */
const confirm = (url: string, body: unknown = {}, headers: Record<string, string> = {}) =>
  http("POST", local(url), body, { "sec-fetch-site": "same-origin", origin: gw.url, ...headers })

const uiOf = async (taskId: string) => (await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body as {
  task: { status: string }
  step: { id: string } | null
}
const stepOf = async (taskId: string) => (await uiOf(taskId)).step?.id ?? null

const completedEvents = async (taskId: string) =>
  ((await http("GET", `${gw.url}/v1/tasks/${taskId}/events`)).body as { events: Array<{ type: string; payload: any }> })
    .events.filter((e) => e.type === "step.completed")

let next = 0
/** A fresh task at controller_approval. */
const freshTask = () => acmeTask(next++)

describe("making links", () => {
  it("svc links create prints both URLs under SVC_PUBLIC_URL and the expiry (72 hours by default)", async () => {
    const taskId = freshTask()
    const before = Date.now()
    const run = await svc(["links", "create", taskId, "--actor", "ann@acme.example", "--tenant", "acme", "--admin-url", gw.adminUrl], {
      env: { SVC_ADMIN_TOKEN: ADMIN_TOKEN }
    })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toMatch(/Step +controller_approval: Controller approval/)
    expect(run.stdout).toMatch(/For +ann@acme\.example/)
    const approve = /Approve +(\S+)/.exec(run.stdout)![1]!
    const reject = /Reject +(\S+)/.exec(run.stdout)![1]!
    expect(approve.startsWith(`${PUBLIC}/links/`) && reject.startsWith(`${PUBLIC}/links/`)).toBe(true)
    expect(approve).not.toBe(reject)
    const expires = Date.parse(/Expires +(\S+)/.exec(run.stdout)![1]!)
    expect(expires - before).toBeGreaterThanOrEqual(72 * 3600_000 - 1000)
    expect(expires - before).toBeLessThanOrEqual(72 * 3600_000 + 60_000)
    // Made, not used: the step still waits.
    expect(await stepOf(taskId)).toBe("controller_approval")
  })

  it("takes an ISO 8601 duration up to 30 days, and refuses others naming the field", async () => {
    const ok = await makeLinks(freshTask(), "ann@acme.example", { expiresIn: "P1DT12H" })
    expect(Date.parse(ok.expiresAt) - Date.now()).toBeGreaterThan(36 * 3600_000 - 60_000)
    expect((await makeLinks(freshTask(), "ann@acme.example", { expiresIn: "P30D" })).expiresAt).toBeDefined()
    for (const expiresIn of ["P31D", "PT721H1S", "P1M", "P1Y", "72h", "PT0S", "P", "PT", "-PT1H", "PT1.5H", "P99999999D"]) {
      const res = await admin("/links", { tenantSlug: "acme", taskId: acmeTask(0), actor: "ann@acme.example", expiresIn })
      expect(res.status, expiresIn).toBe(400)
      expect(res.body.message, expiresIn).toMatch(/^expiresIn: /)
    }
    const cli = await svc(
      ["links", "create", acmeTask(0), "--actor", "a@b.c", "--tenant", "acme", "--expires-in", "3 days", "--admin-url", gw.adminUrl],
      { env: { SVC_ADMIN_TOKEN: ADMIN_TOKEN } }
    )
    expect(cli.code).toBe(2)
    expect(cli.stderr).toMatch(/--expires-in: "3 days" is not an ISO 8601 duration/)
  })

  it("refuses a step that is no approval, an unknown task, another tenant's task by this slug, a bad actor, and needs the admin token", async () => {
    expect((await admin("/links", { tenantSlug: "acme", taskId: GLOBEX_TASK, actor: "a@b.c" })).status).toBe(404)
    expect((await admin("/links", { tenantSlug: "acme", taskId: "00000000-0000-4000-8000-000000000000", actor: "a@b.c" })).status).toBe(404)
    expect((await admin("/links", { tenantSlug: "nope", taskId: acmeTask(0), actor: "a@b.c" })).status).toBe(400)
    for (const actor of ["agent:5f0c8e7a-3b1d-4c2e-9a6f-7d8e9f0a1b2c", " ann@acme.example", "ann\u202e@acme.example"]) {
      const res = await admin("/links", { tenantSlug: "acme", taskId: acmeTask(0), actor })
      expect(res.status, actor).toBe(400)
      expect(res.body.message).toMatch(/^actor: /)
    }
    const unauthenticated = await http("POST", `${gw.adminUrl}/workspace/links`, { tenantSlug: "acme", taskId: acmeTask(0), actor: "a@b.c" })
    expect(unauthenticated.status).toBe(401)
    // The gateway's own port serves no link-making.
    const onGatewayPort = await http("POST", `${gw.url}/workspace/links`, { tenantSlug: "acme", taskId: acmeTask(0), actor: "a@b.c" }, {
      "x-forwarded-email": "ann@acme.example"
    })
    expect(onGatewayPort.status).toBe(404)
  })
})

describe("opening a link", () => {
  it("changes nothing, however often and however it is fetched (scanners, previews, prefetch, HEAD)", async () => {
    const taskId = freshTask()
    const links = await makeLinks(taskId, "ann@acme.example")
    for (const url of [links.approveUrl, links.rejectUrl]) {
      for (const headers of [{}, { purpose: "prefetch" }, { "sec-purpose": "prefetch;prerender" }, { accept: "application/json" }, { "user-agent": "Slackbot-LinkExpanding 1.0" }]) {
        const res = await http("GET", local(url), undefined, headers)
        expect(res.status).toBe(200)
      }
      const head = await fetch(local(url), { method: "HEAD" })
      expect(head.status).toBe(200)
      expect(await head.text()).toBe("")
    }
    expect(await stepOf(taskId)).toBe("controller_approval")
    expect(await completedEvents(taskId)).toEqual([])
    // And the link still works afterwards.
    expect((await confirm(links.approveUrl)).status).toBe(200)
  })

  it("answers a page naming the task, the entity, the step, what is decided and the rows, never cached or framed", async () => {
    const links = await makeLinks(freshTask(), "ann@acme.example")
    const res = await http("GET", local(links.rejectUrl))
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/html/)
    expect(res.headers.get("cache-control")).toBe("no-store")
    expect(res.headers.get("referrer-policy")).toBe("no-referrer")
    expect(res.headers.get("x-frame-options")).toBe("DENY")
    expect(res.headers.get("content-security-policy")).toMatch(/default-src 'none'.*frame-ancestors 'none'/)
    const page = res.text
    for (const text of ["Reject “Controller approval”?", "Payment run", "Acme US Inc.", "ann@acme.example", "12,480.00 USD", "Delta Air Lines", "Ünïcode GmbH", "Reject step", "Comments (optional)"]) {
      expect(page).toContain(text)
    }
    // Text from the workspace is text: a payee's markup is escaped.
    expect(page).toContain("Acme &lt;script&gt;alert(1)&lt;/script&gt; Supplies")
    expect(page).not.toContain("<script>alert(1)")
    // The JSON view says the same, for scripts.
    const json = await http("GET", local(links.approveUrl), undefined, { accept: "application/json" })
    expect(json.body).toMatchObject({ taskId: links.taskId, stepId: "controller_approval", decision: "approve", actor: "ann@acme.example" })
  })
})

describe("deciding", () => {
  it("decides once, as the link's person, recorded as via link; the same link again and the pair's other link then answer 410", async () => {
    const taskId = freshTask()
    const links = await makeLinks(taskId, "ann@acme.example")
    const res = await confirm(links.approveUrl, { comments: "Checked the three payees" })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({ ok: true, decision: "approved", taskId, stepId: "controller_approval", actor: "ann@acme.example" })
    expect(await stepOf(taskId)).toBe("cfo_approval")
    const [event] = await completedEvents(taskId)
    expect(event!.payload).toMatchObject({
      stepId: "controller_approval",
      decision: "approve",
      actor: "ann@acme.example",
      via: "link",
      reason: "Checked the three payees"
    })
    // People read it so in `svc events` (and the console's timeline, the same words).
    const told = await svc(["events", "list", taskId, "--url", gw.url], {})
    expect(told.stdout).toMatch(/ann@acme\.example approved step controller_approval through a decision link — "Checked the three payees"/)
    const snapshots = (await http("GET", `${gw.url}/v1/tasks/${taskId}/snapshots`)).body
    expect(snapshots.controller_approval).toMatchObject({ decision: "approved", decidedBy: "ann@acme.example", via: "link" })

    for (const url of [links.approveUrl, links.rejectUrl]) {
      const again = await confirm(url)
      expect(again.status).toBe(410)
      expect(again.body).toMatchObject({ statusCode: 410, error: "Gone" })
      expect(again.body.message).toMatch(/already used: the step was approved/)
      const page = await http("GET", local(url))
      expect(page.status).toBe(410)
      expect(page.text).toContain("This decision was already made")
    }
    expect(await stepOf(taskId)).toBe("cfo_approval")
    expect(await completedEvents(taskId)).toHaveLength(1)
  })

  it("the two links of a pair sent together: exactly one decides", async () => {
    for (let round = 0; round < 3; round++) {
      const taskId = freshTask()
      const links = await makeLinks(taskId, "ann@acme.example")
      const answers = await Promise.all([confirm(links.approveUrl), confirm(links.rejectUrl), confirm(links.approveUrl)])
      const statuses = answers.map((a) => a.status)
      expect(statuses.filter((s) => s === 200), JSON.stringify(answers.map((a) => a.body))).toHaveLength(1)
      for (const a of answers) if (a.status !== 200) expect([409, 410]).toContain(a.status)
      // A 409 while the winner decides names the link that holds the pair: this one, or the other.
      const urls = [links.approveUrl, links.rejectUrl, links.approveUrl]
      const winner = urls[statuses.indexOf(200)]
      answers.forEach((a, i) => {
        if (a.status === 409 && /right now/.test(a.body.message)) {
          expect(a.body.message).toContain(urls[i] === winner ? "This link is being used right now" : "The other link of this pair")
        }
      })
      expect(await completedEvents(taskId)).toHaveLength(1)
    }
  })

  it("the same link sent twice at once: one decides, the other is told this link is being used, not the other link", async () => {
    let held = 0
    for (let round = 0; round < 4 && held === 0; round++) {
      const taskId = freshTask()
      const links = await makeLinks(taskId, "ann@acme.example")
      const answers = await Promise.all(Array.from({ length: 4 }, () => confirm(links.approveUrl)))
      expect(answers.filter((a) => a.status === 200), JSON.stringify(answers.map((a) => a.body))).toHaveLength(1)
      for (const a of answers.filter((a) => a.status === 409 && /right now/.test(a.body.message))) {
        held++
        expect(a.body).toMatchObject({ statusCode: 409, error: "Conflict" })
        // Before: "The other link of this pair is deciding right now", of the very same link.
        expect(a.body.message).toBe("This link is being used right now: another request with it is deciding; a link decides once")
      }
      expect(await completedEvents(taskId)).toHaveLength(1)
    }
    // Four posts written at once overlap the first one's decision (a settle wait and a transaction).
    expect(held).toBeGreaterThan(0)
  })

  it("a link of a step that has moved on answers 409 and changes nothing", async () => {
    const taskId = freshTask()
    const links = await makeLinks(taskId, "ann@acme.example")
    const decided = await http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved" }, { "x-forwarded-email": "bob@acme.example" })
    expect(decided.status, decided.text).toBe(200)
    const res = await confirm(links.rejectUrl)
    expect(res.status).toBe(409)
    expect(res.body.message).toMatch(/no longer at step “Controller approval”/)
    // Who decided, and how: the step's record says (two people's links confirmed at once: the
    // later one is told who decided, not "decided another way").
    expect(res.body.message).toContain("it was already approved by bob@acme.example")
    const page = await http("GET", local(links.approveUrl))
    expect(page.status).toBe(409)
    expect(page.text).toContain("This step has moved on")
    expect(page.text).toContain("already approved by bob@acme.example")
    expect(await stepOf(taskId)).toBe("cfo_approval")
    expect(await completedEvents(taskId)).toHaveLength(1)
  })

  it("a link of a step rejected by another says so, naming them", async () => {
    const taskId = freshTask()
    const links = await makeLinks(taskId, "ann@acme.example")
    const rejected = await http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "rejected", comments: "wrong period" }, {
      "x-forwarded-email": "Carol@acme.example"
    })
    expect(rejected.status, rejected.text).toBe(200)
    const res = await confirm(links.approveUrl)
    expect(res.status).toBe(409)
    // And when: the step's record (its snapshot), as a decision beaten in the same moment is told.
    const decidedAt = (await http("GET", `${gw.url}/v1/tasks/${taskId}/snapshots`)).body.controller_approval.decidedAt
    expect(decidedAt).toMatch(/^\d{4}-\d\d-\d\dT/)
    expect(res.body.message).toMatch(new RegExp(`it was already rejected by Carol@acme\\.example at ${decidedAt.replaceAll(".", "\\.")}\\.$`))
  })

  it("four-eyes holds through links: the earlier step's decider is refused (403) and the pair stays unused", async () => {
    // Ann decided controller_approval as "Ann@Acme.example"; cfo_approval requires someone else.
    const ann = await makeLinks(CFO_TASK, "ann@acme.example")
    const refused = await confirm(ann.approveUrl)
    expect(refused.status).toBe(403)
    expect(refused.body.message).toMatch(/four-eyes/)
    expect(await stepOf(CFO_TASK)).toBe("cfo_approval")
    // Refused, not used: the link still opens.
    expect((await http("GET", local(ann.approveUrl))).status).toBe(200)
    const bob = await makeLinks(CFO_TASK, "bob@acme.example")
    expect((await confirm(bob.approveUrl)).status).toBe(200)
    expect(await stepOf(CFO_TASK)).toBe("file_receipt")
    // Ann's pair now names a step that has moved on.
    expect((await confirm(ann.rejectUrl)).status).toBe(409)
  })

  it("behind a login the signed-in person must be the link's (403 otherwise); with the route left open, the link names them", async () => {
    const taskId = freshTask()
    const links = await makeLinks(taskId, "carol@acme.example")
    const other = await confirm(links.approveUrl, {}, { "x-forwarded-email": "dave@acme.example" })
    expect(other.status).toBe(403)
    expect(other.body.message).toMatch(/is for carol@acme\.example/)
    const otherPage = await http("GET", local(links.approveUrl), undefined, { "x-forwarded-email": "dave@acme.example" })
    expect(otherPage.status).toBe(403)
    expect(otherPage.text).toContain("This link is for someone else")
    expect(await stepOf(taskId)).toBe("controller_approval")
    // The same person, as the edge spells them: decided as the link names them.
    const same = await confirm(links.approveUrl, {}, { "x-forwarded-email": "CAROL@acme.example" })
    expect(same.status, same.text).toBe(200)
    expect((await completedEvents(taskId))[0]!.payload.actor).toBe("carol@acme.example")
    // Left open at the proxy (no header at all) it works too: see the other tests.
  })

  it("only the page's own JSON POST decides: other sites, forms and plain text are refused before anything is read", async () => {
    const taskId = freshTask()
    const links = await makeLinks(taskId, "ann@acme.example")
    const url = local(links.approveUrl)
    const refusals: Array<[Record<string, string>, string | undefined, number]> = [
      [{ "sec-fetch-site": "cross-site", origin: "https://evil.example" }, "{}", 403],
      [{ "sec-fetch-site": "cross-site", origin: "https://app.example.test" }, "{}", 403],
      [{ "sec-fetch-site": "same-site", origin: "https://other.example.test" }, "{}", 403],
      [{ origin: "https://evil.example" }, "{}", 403],
      [{ origin: "null" }, "{}", 403],
      [{ referer: "https://evil.example/x" }, "{}", 403],
      [{ "sec-fetch-site": "same-origin", "content-type": "text/plain" }, "{}", 415],
      [{ "sec-fetch-site": "same-origin", "content-type": "application/x-www-form-urlencoded" }, "comments=x", 415],
      [{ "sec-fetch-site": "same-origin", "content-type": "application/json" }, "{\"coment\":\"x\"}", 400],
      [{ "sec-fetch-site": "same-origin", "content-type": "application/json" }, "{\"comments\":5}", 400],
      [{ "sec-fetch-site": "same-origin", "content-type": "application/json" }, "[", 400]
    ]
    const messages: Array<string> = []
    for (const [headers, body, status] of refusals) {
      const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, ...(body !== undefined ? { body } : {}) })
      expect(res.status, JSON.stringify(headers)).toBe(status)
      const answer = (await res.json()) as { message: string }
      expect(answer).toMatchObject({ statusCode: status })
      messages.push(answer.message)
    }
    // Bad bodies are named by field.
    expect(messages.slice(-3, -1)).toEqual(["coment: is unexpected, expected: \"comments\"", "comments: Expected string, actual 5"])
    for (const method of ["PUT", "DELETE", "PATCH", "OPTIONS", "PROPFIND"]) {
      // With no body, a malformed one, or one of another type: the method is judged first.
      for (const init of [{}, { headers: { "content-type": "application/json" }, body: "[" }, { headers: { "content-type": "text/plain" }, body: "x" }]) {
        const res = await fetch(url, { method, ...init })
        expect(res.status, `${method} ${JSON.stringify(init)}`).toBe(405)
        expect(res.headers.get("allow")).toBe("GET, HEAD, POST")
        // The 405 does not echo the token (it is the link's credential).
        expect(await res.text()).not.toContain(url.split("/").pop()!)
      }
    }
    // A path below a link's: a 404 that does not echo the token either.
    const below = await fetch(`${url}/x`)
    expect(below.status).toBe(404)
    expect(await below.text()).not.toContain(url.split("/").pop()!)
    // The GL connect page beside it: GET its page, POST its completion, 405 with Allow otherwise.
    const connect = `${gw.url}/workspace/gl/connect/${"0".repeat(8)}-0000-4000-8000-${"0".repeat(12)}`
    for (const [path, allow] of [[connect, "GET, HEAD"], [`${connect}/complete`, "POST"]] as const) {
      for (const method of ["POST", "PUT", "DELETE", "PATCH", "GET"].filter((m) => !allow.includes(m))) {
        const res = await fetch(path, { method, headers: { "content-type": "application/json", "sec-fetch-site": "same-origin" }, body: method === "GET" ? null : "[" })
        expect(res.status, `${method} ${path}`).toBe(405)
        expect(res.headers.get("allow"), `${method} ${path}`).toBe(allow)
      }
    }
    expect(await stepOf(taskId)).toBe("controller_approval")
    expect((await confirm(links.approveUrl)).status).toBe(200)
  })
})

describe("links that do not work", () => {
  it("a forged, tampered or truncated token answers 404 like a missing one, and the real link still works", async () => {
    const taskId = freshTask()
    const links = await makeLinks(taskId, "ann@acme.example")
    const token = links.approveUrl.slice(`${PUBLIC}/links/`.length)
    const [pairId, letter, signature] = token.split(".") as [string, string, string]
    const flip = (s: string, at: number) => s.slice(0, at) + (s[at] === "A" ? "B" : "A") + s.slice(at + 1)
    const other = links.rejectUrl.slice(`${PUBLIC}/links/`.length).split(".")[2]!
    const forged = signLink(randomBytes(32), {
      pairId, tenantId: ACME, taskId, stepId: "controller_approval", decision: "reject", actor: "ann@acme.example", expiresAt: links.expiresAt
    })
    const variants = [
      `${pairId}.r.${signature}`, // the approve signature on the reject link
      `${pairId}.a.${other}`, // the reject signature on the approve link
      `${flip(pairId, 3)}.${letter}.${signature}`,
      `${pairId}.${letter}.${flip(signature, 10)}`,
      `${pairId}.${letter}.${signature.slice(0, -1)}`,
      `${pairId}.${letter}.${signature.slice(0, 20)}`,
      `${pairId}.${letter}`,
      pairId,
      `${token}x`,
      `${token}=`,
      // The same bytes in a non-canonical spelling of the last character.
      `${pairId}.${letter}.${signature.slice(0, -1)}${String.fromCharCode(signature.charCodeAt(signature.length - 1) + 1)}`,
      `${pairId}.${letter.toUpperCase()}.${signature}`,
      // The same bytes in standard base64's alphabet ('+' and '/' for '-' and '_'). A signature
      // with neither (a quarter of them) has no such spelling: then a '+' in its first place.
      /[-_]/.test(signature) ? `${pairId}.${letter}.${signature.replace(/-/g, "+").replace(/_/g, "/")}` : `${pairId}.${letter}.+${signature.slice(1)}`,
      forged.replace(/^[^.]+/, pairId),
      "%00",
      "a".repeat(5000)
    ]
    for (const v of variants) {
      const res = await http("POST", `${gw.url}/links/${v}`, {}, { "sec-fetch-site": "same-origin" })
      expect(res.status, v).toBe(404)
      expect(res.body, v).toMatchObject({ statusCode: 404, error: "Not Found" })
      const page = await http("GET", `${gw.url}/links/${v}`)
      expect(page.status, v).toBe(404)
    }
    expect(await stepOf(taskId)).toBe("controller_approval")
    expect((await confirm(links.rejectUrl)).status).toBe(200)
    expect((await uiOf(taskId)).task.status).toBe("FAILED")
  })

  it("an expired link answers 410 with a page that says so, and changes nothing", async () => {
    const taskId = freshTask()
    const links = await makeLinks(taskId, "ann@acme.example", { expiresIn: "PT1S" })
    // Wait on the link's own state, not on a timer: it turns 410 once its second is over.
    const deadline = Date.now() + 10_000
    let page = await http("GET", local(links.approveUrl))
    while (page.status === 200 && Date.now() < deadline) page = await http("GET", local(links.approveUrl))
    expect(page.status).toBe(410)
    expect(page.text).toContain("This link has expired")
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(links.expiresAt))
    const res = await confirm(links.approveUrl)
    expect(res.status).toBe(410)
    expect(res.body.message).toMatch(/worked until/)
    expect(await stepOf(taskId)).toBe("controller_approval")
  })

  it("another tenant's link answers 404 on this tenant's gateway", async () => {
    // Made by globex's own gateway on the same database (this one makes none for globex).
    const globexPublic = "https://approvals.example.test/globex"
    const globex = await startBuilt({
      SVC_TENANT_SLUG: "globex",
      SVC_DATABASE_URL: `file:${join(dir, "w.db")}`,
      SVC_PUBLIC_URL: globexPublic,
      SVC_ADMIN_TOKEN: ADMIN_TOKEN
    })
    try {
      const res = await http("POST", `${globex.adminUrl}/workspace/links`, { tenantSlug: "globex", taskId: GLOBEX_TASK, actor: "gina@globex.example" }, {
        authorization: `Bearer ${ADMIN_TOKEN}`
      })
      expect(res.status, res.text).toBe(201)
      const onAcme = gw.url + String(res.body.approveUrl).slice(globexPublic.length)
      expect((await http("GET", onAcme)).status).toBe(404)
      const post = await http("POST", onAcme, {}, { "sec-fetch-site": "same-origin", origin: gw.url })
      expect(post.status).toBe(404)
      expect(post.body.message).not.toMatch(/globex|Globex/)
    } finally {
      await globex.stop()
    }
  }, 60_000)

  it("svc links revoke ends a task's links, or a person's, early (410, a page that says so)", async () => {
    const t1 = freshTask()
    const t2 = freshTask()
    const a1 = await makeLinks(t1, "erin@acme.example")
    const b1 = await makeLinks(t1, "frank@acme.example")
    const a2 = await makeLinks(t2, "Erin@ACME.example")
    const b2 = await makeLinks(t2, "frank@acme.example")
    const byTask = await svc(["links", "revoke", t1, "--tenant", "acme", "--admin-url", gw.adminUrl], {
      env: { SVC_ADMIN_TOKEN: ADMIN_TOKEN }
    })
    expect(byTask.code, byTask.stderr).toBe(0)
    expect(byTask.stdout).toContain("Revoked 2 link pairs")
    for (const l of [a1, b1]) {
      expect((await confirm(l.approveUrl)).status).toBe(410)
      expect((await http("GET", local(l.rejectUrl))).text).toContain("This link was withdrawn")
    }
    const byPerson = await admin("/links/revoke", { tenantSlug: "acme", actor: "erin@acme.example" })
    expect(byPerson.body).toEqual({ revoked: 1, deciding: 0 })
    expect((await confirm(a2.approveUrl)).status).toBe(410)
    expect(await stepOf(t1)).toBe("controller_approval")
    expect(await stepOf(t2)).toBe("controller_approval")
    expect((await confirm(b2.approveUrl)).status).toBe(200)
    expect((await admin("/links/revoke", { tenantSlug: "acme" })).status).toBe(400)
  })

  it("no token reaches the process's log, however the path is spelt", async () => {
    const links = await makeLinks(freshTask(), "ann@acme.example")
    const token = links.approveUrl.split("/links/")[1]!
    await http("GET", local(links.approveUrl))
    // The router takes these spellings to the link route too: the log must not show them raw.
    // `%E2%84%AA` is the Kelvin sign, which the router lower-cases to `k` (Unicode case mapping).
    const spellings = [`/LINKS/${token}`, `//links/${token}`, `/%6Cinks/${token}`, `/links//${token}?x=1`, `/lin%E2%84%AAs/${token}`]
    for (const spelt of spellings) {
      expect((await http("GET", `${gw.url}${spelt}`)).status, spelt).toBe(200)
    }
    // The absolute form of the request target (a proxy's), which fetch never sends.
    expect(await statusOfRaw(`GET ${gw.url}/links/${token} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).toBe(200)
    await confirm(links.rejectUrl)
    const signatures = [links.approveUrl, links.rejectUrl].map((u) => u.split(".").at(-1)!)
    const log = gw.output()
    expect(log).toContain("/links/:token")
    for (const s of signatures) expect(log).not.toContain(s)
    expect(log).not.toContain(token.split(".")[0]!)
  })
})

describe("without SVC_PUBLIC_URL", () => {
  it("no link is made, and svc links create says why", async () => {
    const own = mkdtempSync(join(tmpdir(), "links-nourl-"))
    const plain = await startBuilt({
      SVC_TENANT_SLUG: "acme",
      SVC_DATABASE_URL: `file:${join(own, "w.db")}`,
      SVC_SEED_FILE: writeWorld(own)
    })
    try {
      const run = await svc(["links", "create", acmeTask(0), "--actor", "ann@acme.example", "--tenant", "acme", "--admin-url", plain.adminUrl])
      expect(run.code).toBe(1)
      expect(run.stderr).toMatch(/No link was made: SVC_PUBLIC_URL is not set/)
      expect(run.stdout).toBe("")
    } finally {
      await plain.stop()
      rmSync(own, { recursive: true, force: true })
    }
  })
})
