/**
 * The pure rules behind assignment and four-eyes (src/domain/actorSkeleton.ts,
 * src/domain/assignment.ts) and the timeline's words for the inbox's events.
 */
import { describe, expect, it } from "vitest"
import { actorKey, actorSkeleton, groupNameOf, samePerson } from "../../src/domain/actorSkeleton.js"
import { actRefusal, claimDecision, durationMs } from "../../src/domain/assignment.js"
import { distinctDeciderRefusal } from "../../src/domain/engine.js"
import { describeEvent } from "../../src/client/eventText.js"
import { actorProblem } from "../../src/services/actorValue.js"

const AGENT = "5f0c8e7a-3b1d-4c2e-9a6f-7d8e9f0a1b2c"

describe("actorSkeleton: one person however their name is written", () => {
  it("folds case, compatibility forms, invisible characters and confusables", () => {
    const ann = actorSkeleton("ann@acme.test")
    for (const v of ["ANN@acme.test", "ＡＮＮ@acme.test", "\u0430nn@acme.test", "an\u034Fn@acme.test", "ann\uFE0F@acme.test", "a\u200Bnn@acme.test", "ann\u2800@acme.test"]) {
      expect(actorSkeleton(v), JSON.stringify(v)).toBe(ann)
    }
    expect(actorSkeleton("arn@acme.test")).toBe(actorSkeleton("am@acme.test"))
    // A dot above an i (drawn as the i's own dot), and the dots e-mail domains read as `.`.
    const fin = actorSkeleton("fin@acme.test")
    for (const v of ["fi\u0307n@acme.test", "fin@acme\u3002test", "fin@acme\uFF61test", "fin@acme\uFF0Etest", "FI\u0307N@acme.test"]) {
      expect(actorSkeleton(v), JSON.stringify(v)).toBe(fin)
    }
    expect(actorSkeleton("f\u00ECn@acme.test")).not.toBe(fin)
    // Capital I in Latin, Greek, Cyrillic and as a numeral reads as l (case folding made each an i).
    const bill = actorSkeleton("bill@acme.test")
    for (const v of ["biII@acme.test", "bi\u0399\u0399@acme.test", "bi\u0406\u0406@acme.test", "bi\u2160\u2160@acme.test", "bi11@acme.test", "BILL@acme.test", "bi\u01c0\u01c0@acme.test"]) {
      expect(actorSkeleton(v), JSON.stringify(v)).toBe(bill)
    }
    expect(actorSkeleton("bell@acme.test")).not.toBe(bill)
    // Capitals of other scripts (case folding made small letters the table reads otherwise), small
    // letters the table makes small capitals, ẞ, vv and cl (from an attack pass's pairs; visible
    // marks, a dot below or a stroke, stay apart as fìn does).
    const pairs: ReadonlyArray<readonly [string, string]> = [
      ["KIM", "\u039aIM"], ["KIM", "\u041aIM"], ["TOM", "\u03a4OM"], ["TOM", "\u0422OM"], ["EVE", "\u0395VE"],
      ["NINA", "\u039dINA"], ["HAL", "\u0397AL"], ["HAL", "\u041dAL"], ["MARY", "\u039cARY"], ["MARY", "\u041cARY"],
      ["BOB", "\u0392OB"], ["BOB", "\u0412OB"], ["XU", "\u03a7U"], ["ZOE", "\u0396OE"], ["YAN", "\u03a5AN"],
      ["tom", "\u0442om"], ["kim", "\u043aim"], ["hal", "\u043dal"], ["bob", "\u0432ob"], ["ana", "\u1d00na"],
      ["STRAUSS", "STRAU\u1e9e"], ["strau\u00df", "STRAU\u1e9e"], ["vvill", "will"], ["clan", "dan"]
    ]
    for (const [a, b] of pairs) expect(samePerson(`${a}@acme.test`, `${b}@acme.test`), `${a} / ${b}`).toBe(true)
    for (const [a, b] of [["ann", "anne"], ["bob", "rob"], ["kim", "tim"], ["eve", "ava"]] as const) {
      expect(samePerson(`${a}@acme.test`, `${b}@acme.test`), `${a} / ${b}`).toBe(false)
    }
    expect(actorSkeleton("bob@acme.test")).not.toBe(ann)
  })

  it("a group reference's prefix in any case and compatibility form, astral letters too", () => {
    for (const ref of ["group:ctl", "GROUP:ctl", "Group:ctl", "\uff27\uff32\uff2f\uff35\uff30\uff1actl", "\u{1d420}roup:ctl", "\u{1d406}\u{1d411}\u{1d40e}\u{1d414}\u{1d40f}:ctl"]) {
      expect(groupNameOf(ref), JSON.stringify(ref)).toBe("ctl")
    }
    for (const ref of ["ann@acme.test", "groupie:ctl", "gr\u043eup:ctl", "group", "g"]) expect(groupNameOf(ref), ref).toBeUndefined()
  })

  it("grants (actorKey) fold only case and compatibility forms: a look-alike is not the assignee", () => {
    expect(actorKey("ANN@acme.test")).toBe(actorKey("ann@acme.test"))
    expect(actorKey("\u0430nn@acme.test")).not.toBe(actorKey("ann@acme.test"))
  })

  it("an agent is never a named person, and is itself only", () => {
    expect(samePerson(`agent:${AGENT}`, "ann@acme.test")).toBe(false)
    expect(samePerson(`agent:${AGENT}`, `Agent:${AGENT.toUpperCase()}`)).toBe(true)
  })

  it("the edge's actor values with invisible or format characters are refused", () => {
    for (const v of ["ann\uFE0F@x", "an\u034Fn@x", "ann\u2800@x", "ann\u3164@x", "a\u00ADnn@x", "\u2066ann@x"]) {
      expect(actorProblem(v), JSON.stringify(v)).toBeDefined()
    }
    expect(actorProblem("Ann Smith")).toBeUndefined()
  })
})

describe("four-eyes and assignment", () => {
  const runbook = {
    configSchema: {},
    steps: [
      { id: "a", title: "A", displayHint: { component: "APPROVAL", config: {} }, args: {} },
      { id: "b", title: "B", displayHint: { component: "APPROVAL", config: {} }, args: {}, requireDistinctDecider: true }
    ]
  }
  it("a four-eyes step refuses an agent and a look-alike of the earlier decider", () => {
    const snaps = { a: { decision: "approved", decidedBy: "ann@acme.test" } }
    expect(distinctDeciderRefusal(runbook, "b", snaps, `agent:${AGENT}`)).toContain("agent")
    expect(distinctDeciderRefusal(runbook, "b", snaps, "\u0430nn@acme.test")).toContain("four-eyes")
    expect(distinctDeciderRefusal(runbook, "b", snaps, "bob@acme.test")).toBeUndefined()
  })

  it("assignment holds only with an identity (agents always); an override claim lets its holder act for the agent", () => {
    const step = { id: "s", agentId: AGENT }
    const ann = { actor: "ann@acme.test", groups: [], enforced: true }
    expect(actRefusal(step, { ...ann, enforced: false }, undefined)).toBeUndefined()
    expect(actRefusal(step, ann, undefined)).toContain(`agent:${AGENT}`)
    expect(actRefusal(step, { actor: `agent:${AGENT}`, groups: [], enforced: false }, undefined)).toBeUndefined()
    expect(actRefusal({ id: "s", assignees: ["ann@acme.test"] }, { actor: `agent:${AGENT}`, groups: [], enforced: false }, undefined)).toBeDefined()
    const claim = { stepId: "s", by: "ann@acme.test", at: "2026-01-01T00:00:00.000Z", override: true }
    expect(actRefusal(step, ann, claim)).toBeUndefined()
    expect(actRefusal(step, { ...ann, actor: "bob@acme.test" }, claim)).toBeDefined()
    // Taken over: the step's own agent waits for the release (before: it still decided the step).
    const agent = { actor: `agent:${AGENT}`, groups: [], enforced: false }
    expect(actRefusal(step, agent, claim)).toMatch(/taken over from its agent by ann@acme\.test.*released/)
    expect(actRefusal(step, agent, { ...claim, override: false })).toBeUndefined()
    expect(claimDecision(step, { actor: `agent:${AGENT}`, groups: [], enforced: false }, undefined, true)._tag).toBe("forbidden")
  })

  it("dueIn: ISO 8601 weeks, days, hours, minutes, seconds; calendar units refused", () => {
    expect(durationMs("PT4H")).toBe(4 * 3_600_000)
    expect(durationMs("P1W2DT3M")).toBe((9 * 24 * 60 + 3) * 60_000)
    for (const bad of ["P", "PT", "P1M", "P1Y", "4h", "PT-1H", "P1DT"]) expect(durationMs(bad), bad).toBeUndefined()
  })
})

describe("the timeline's words", () => {
  it("task.waiting says for whom, at which step, by when", () => {
    const text = describeEvent({
      taskId: "t",
      seq: 3,
      position: "3",
      origin: "gateway",
      type: "task.waiting",
      source: "workspace",
      createdAt: "2026-01-01T00:00:00.000Z",
      payload: { stepId: "prepare", title: "Prepare the close", component: "APPROVAL", assignees: ["ann@acme.test", "group:controllers"], dueAt: "2026-01-02T00:00:00.000Z" }
    } as any)
    expect(text?.what).toEqual([
      "Waiting for ann@acme.test, group:controllers at ",
      "step ",
      { kind: "name", text: "Prepare the close" },
      ", due ",
      { kind: "value", value: "2026-01-02T00:00:00.000Z" }
    ])
  })
})
