/**
 * The gateway's own events cannot be forged, on the built process: producers posting sources
 * that read like the gateway's (`audit`, `workspace`, `agent:...` with variation selectors, the
 * combining grapheme joiner, a Hangul filler, the Braille blank, Cyrillic look-alikes, a zero
 * width space, a one-dot leader) with the gateway's event types are refused (400) or stored as
 * the producer's (`origin: "producer"`), and `svc events list` tells none of them as the
 * gateway's record; a client cannot set `origin`. On the admin listener the workspace API's
 * appendEvent refuses `audit`, `workspace` and `agent:...` and stores anything else as the
 * producer's. Before the mark, the check was a string match: U+034F, U+3164, U+2800 and the
 * Cyrillic look-alike passed, and the admin API stored `source: "audit"` with any actor.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { ACME, ACME_US } from "../support/world.js"
import { stopAllProcesses, svc } from "../cli/harness.js"
import { type BuiltGateway, readTimeline, startBuiltGateway, EXAMPLE_FIXTURE } from "./support.js"

const ADMIN_TOKEN = "timeline-forgery-admin-token-0123456789"

let gw: BuiltGateway
beforeAll(async () => {
  gw = await startBuiltGateway({ SVC_ADMIN_TOKEN: ADMIN_TOKEN }, EXAMPLE_FIXTURE)
}, 60_000)
afterAll(async () => {
  await gw?.cleanup()
  stopAllProcesses()
})

/** Sources that read as the gateway's (or nearly), each with the record type it would pass for. */
const LOOK_ALIKES: ReadonlyArray<readonly [source: string, type: string]> = [
  ["audit\uFE0F", "file.stored"], // variation selector 16
  ["audit\uFE0E", "data.ingested"], // variation selector 15
  ["au\u034Fdit", "task.created"], // combining grapheme joiner
  ["audit\u3164", "row.edited"], // Hangul filler
  ["\u2800audit", "row.rejected"], // Braille pattern blank
  ["\u0430udit", "file.stored"], // Cyrillic а
  ["workspace\u200B", "step.completed"], // zero width space
  ["w\u043Erkspace", "step.completed"], // Cyrillic о
  ["work\u3164space", "task.status_changed"],
  ["\uFF57orkspace", "source.submitted"], // full-width w
  ["agent\u2024x", "agent.action"], // one dot leader
  ["agent\uFF1Ax", "agent.action"], // full-width colon
  ["AUDIT", "data.ingested"],
  [" workspace", "step.completed"],
  ["audit\u00AD", "file.stored"] // soft hyphen
]

/** What each forged event says, so that a sentence would name it. */
const payloadFor = (type: string) => ({
  actor: "cfo@acme.example",
  stepId: "sign_off",
  decision: "approve",
  fileName: "forged-invoice.pdf",
  sizeBytes: 1234,
  source: "receipts",
  count: 999,
  kind: "file",
  documentIds: ["7eaa8264-3830-4a32-ab40-c343ff3a2de5"],
  from: "IN_PROGRESS",
  to: "COMPLETED",
  rowId: "0349944d-fb03-40cf-a73a-21b10c2a61e9",
  field: "amount",
  oldValue: 1,
  newValue: 1000000,
  tool: "decide_step",
  type
})

/** What `svc events list` says for the gateway's own record of these types. */
const SENTENCES = /approved step|uploaded forged|ingested 999|Task status changed|changed amount|rejected row|Submitted /

describe("forged sources (built process)", () => {
  it("on /v1: refused or stored as the producer's; svc events list tells none as the gateway's record", async () => {
    const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } })
    expect(created.status).toBe(201)
    const taskId: string = created.body.id
    const events = `${gw.url}/v1/tasks/${taskId}/events`

    // The gateway's own sources, as they are: refused.
    for (const source of ["audit", "workspace", "agent:a11a0000-0000-4000-8000-0000000000a1", "Audit", "agent:"]) {
      const res = await http("POST", events, { type: "step.completed", source, seq: 1, payload: payloadFor("step.completed") })
      expect(res.status, JSON.stringify(source)).toBe(400)
    }
    // No client sets the mark.
    for (const origin of ["gateway", "agent"]) {
      const res = await http("POST", events, { type: "step.completed", source: "worker", seq: 1, origin, payload: payloadFor("step.completed") })
      expect(res.status, origin).toBe(400)
    }

    const stored: Array<string> = []
    for (const [i, [source, type]] of LOOK_ALIKES.entries()) {
      const res = await http("POST", events, { type, source, sourceLabel: source, seq: i + 1, payload: payloadFor(type) })
      expect([200, 400], `${JSON.stringify(source)}: ${res.text}`).toContain(res.status)
      if (res.status === 200) {
        expect(res.body.event.origin, JSON.stringify(source)).toBe("producer")
        stored.push(res.body.event.position)
      }
    }
    console.log(`look-alike sources: ${stored.length} of ${LOOK_ALIKES.length} stored as the producer's, the others refused`)

    const { events: timeline } = await readTimeline(gw.url, taskId)
    // Only the task's creation (and its first step's task.waiting, written with it) is the
    // gateway's; every look-alike that got in is the producer's.
    expect(timeline.filter((e) => e.origin === "gateway").map((e) => e.type)).toEqual(["task.created", "task.waiting"])
    for (const e of timeline.filter((e) => stored.includes(e.position))) expect(e.origin).toBe("producer")

    const list = await svc(["events", "list", taskId, "--limit", "1000"], { env: { SVC_URL: gw.url } })
    expect(list.code, list.stderr).toBe(0)
    const lines = list.stdout.split("\n")
    // The one real record reads as a sentence (the control) ...
    expect(lines.filter((l) => l.includes("started the task"))).toHaveLength(1)
    // ... the forged ones show their payload, never a sentence.
    expect(lines.filter((l) => SENTENCES.test(l))).toEqual([])
    expect(lines.filter((l) => l.includes("cfo@acme.example"))).toHaveLength(stored.length)

    const asJson = await svc(["events", "list", taskId, "--limit", "1000", "--json"], { env: { SVC_URL: gw.url } })
    expect(asJson.code, asJson.stderr).toBe(0)
    const parsed = JSON.parse(asJson.stdout) as { events: Array<{ origin: string; position: string }> }
    expect(parsed.events.filter((e) => stored.includes(e.position)).map((e) => e.origin)).toEqual(stored.map(() => "producer"))
  }, 60_000)

  it("on the admin listener's workspace API: the gateway's sources refused, anything else stored as the producer's", async () => {
    const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-12" } })
    expect(created.status).toBe(201)
    const taskId: string = created.body.id
    const admin = `${gw.adminUrl}/workspace/tenants/${ACME}/tasks/${taskId}/events`
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}` }

    // Without the token: 401, whatever the source.
    expect((await http("POST", admin, { type: "note", source: "worker", seq: 1, payload: {} })).status).toBe(401)

    for (const source of ["audit", "workspace", "agent:a11a0000-0000-4000-8000-0000000000a1", "AUDIT", "audit\u200B"]) {
      const res = await http("POST", admin, { type: "data.ingested", source, seq: 7, payload: payloadFor("data.ingested") }, auth)
      expect(res.status, `${JSON.stringify(source)}: ${res.text}`).toBe(400)
    }
    const stored: Array<string> = []
    for (const [i, [source, type]] of [["worker", "step.completed"] as const, ...LOOK_ALIKES].entries()) {
      const res = await http("POST", admin, { type, source, seq: 100 + i, payload: payloadFor(type) }, auth)
      expect([200, 201, 400], `${JSON.stringify(source)}: ${res.text}`).toContain(res.status)
      if (res.status < 300) {
        expect(res.body.origin, JSON.stringify(source)).toBe("producer")
        stored.push(res.body.position)
      }
    }
    expect(stored.length).toBeGreaterThan(0)
    const { events: timeline } = await readTimeline(gw.url, taskId)
    // The creation's own records only (task.created, the first step's task.waiting).
    expect(timeline.filter((e) => e.origin === "gateway").map((e) => e.type)).toEqual(["task.created", "task.waiting"])
    expect(timeline.filter((e) => stored.includes(e.position)).map((e) => e.origin)).toEqual(stored.map(() => "producer"))
  })
})
