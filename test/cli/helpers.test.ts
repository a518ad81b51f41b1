/** The CLI's pure parts: start-param checks, record files, file names, the timeline, agent URIs. */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { describe, expect, it, vi } from "vitest"
import { BadRequest } from "../../src/api/errors.js"
import { reportFailure } from "../../src/cli/app.js"
import type { TaskEvent, WorkflowEntry } from "../../src/api/resources.js"
import { parseAgentUri } from "../../src/cli/commands/agents.js"
import { parseRecords } from "../../src/cli/commands/data.js"
import { filenameOf } from "../../src/cli/commands/files.js"
import { parseKeyValues, parseValue } from "../../src/cli/common.js"
import { makeTimelineRenderer } from "../../src/cli/events.js"
import { buildContext, summarizeParams, unknownWorkflowMessage } from "../../src/cli/startParams.js"

const workflow: WorkflowEntry = {
  id: "expense-review",
  name: "Expense review",
  startParams: [
    { key: "period", type: "string", pattern: "^\\d{4}-(0[1-9]|1[0-2])$", description: "Accounting period, YYYY-MM", required: true },
    { key: "threshold", type: "number", default: 75, required: false },
    { key: "currency", type: "string", enum: ["USD", "EUR"], default: "USD", required: false },
    { key: "accountId", type: "string", default: "1000", required: false },
    { key: "entities", type: "array", default: [], required: false }
  ]
}

const given = (...pairs: Array<string>) =>
  Effect.runSync(parseKeyValues("--param", pairs))

describe("--param key=value", () => {
  it("reads values as JSON when they parse, else as text", () => {
    expect(given("a=1", "b=true", "c=[1,2]", "d=2026-11", "e=", "f=x=y")).toEqual([
      { key: "a", raw: "1", value: 1 },
      { key: "b", raw: "true", value: true },
      { key: "c", raw: "[1,2]", value: [1, 2] },
      { key: "d", raw: "2026-11", value: "2026-11" },
      { key: "e", raw: "", value: "" },
      { key: "f", raw: "x=y", value: "x=y" }
    ])
    expect(Effect.runSync(parseValue("value", "null"))).toBeNull()
  })

  it("refuses a number the JSON reading would change, naming where; a string parameter keeps its text", () => {
    const refused = Effect.runSync(Effect.result(parseValue("value", "9007199254740993"))).pipe(Result.getFailure)
    expect(refused).toMatchObject({ _tag: "Some", value: { message: expect.stringMatching(/^value: the number 9007199254740993 cannot be stored exactly/) } })
    expect(Effect.runSync(parseValue("value", "9007199254740992"))).toBe(9007199254740992)
    const [big] = given("accountId=9007199254740993")
    expect(big).toMatchObject({ key: "accountId", raw: "9007199254740993", inexact: expect.stringContaining("cannot be stored exactly") })
    // A string-typed parameter takes the text as typed; a number-typed one refuses it.
    expect(buildContext(workflow, [...given("period=2026-11"), big!])).toMatchObject({ ok: true, context: { accountId: "9007199254740993" } })
    expect(buildContext(workflow, given("period=2026-11", "threshold=9007199254740993"))).toMatchObject({
      ok: false,
      message: expect.stringContaining("--param threshold: the number 9007199254740993 cannot be stored exactly")
    })
  })

  it("refuses a flag without a key, and a key given twice", () => {
    const fail = (...pairs: Array<string>) =>
      Effect.runSync(Effect.result(parseKeyValues("--param", pairs))).pipe(Result.getFailure)
    expect(fail("=1")).toMatchObject({ _tag: "Some", value: { message: `--param "=1": expected key=value` } })
    expect(fail("novalue")).toMatchObject({ value: { message: `--param "novalue": expected key=value` } })
    expect(fail("a=1", "a=2")).toMatchObject({ value: { message: "--param a: given more than once" } })
  })
})

describe("start params", () => {
  it("builds the context; string params keep the text as typed", () => {
    expect(buildContext(workflow, given("period=2026-11", "threshold=100", "accountId=2000", "entities=[\"a\"]"))).toEqual({
      ok: true,
      context: { period: "2026-11", threshold: 100, accountId: "2000", entities: ["a"] }
    })
  })

  it("names every problem and lists what the workflow takes", () => {
    const r = buildContext(workflow, given("period=2026-13", "threshold=lots", "currency=GBP", "colour=red"))
    expect(r.ok).toBe(false)
    const message = (r as { message: string }).message
    expect(message).toContain(`--param period: "2026-13" does not match the pattern ^\\d{4}-(0[1-9]|1[0-2])$ (Accounting period, YYYY-MM)`)
    expect(message).toContain(`--param threshold: expected a number, got string "lots"`)
    expect(message).toContain(`--param currency: "GBP" is not one of "USD", "EUR"`)
    expect(message).toContain(`unknown parameter "colour"`)
    expect(message).toContain("--param threshold (number, default 75)")
    expect(message).toContain(`--param currency (string, default "USD", one of "USD" | "EUR")`)
  })

  it("requires the params without a default", () => {
    const r = buildContext(workflow, [])
    expect(r).toMatchObject({ ok: false })
    expect((r as { message: string }).message).toContain(`missing required parameter "period": pass --param period=<string>`)
  })

  it("sends the values unchecked when the workflow publishes no startParams", () => {
    expect(buildContext({ id: "legacy", name: "Legacy" }, given("x=1"))).toEqual({ ok: true, context: { x: 1 } })
  })

  it("lists the workflows an entity can start when the id is unknown", () => {
    expect(unknownWorkflowMessage("nope", "E", [workflow, { id: "legacy", name: "Legacy" }])).toBe(
      `unknown workflow "nope" for entity E. Workflows it can start:\n  expense-review  Expense review\n  legacy          Legacy`
    )
  })

  it("summarizes params for the workflows table", () => {
    expect(summarizeParams(workflow.startParams)).toBe(
      `period*:string threshold:number=75 currency:string="USD" accountId:string="1000" entities:array=[]`
    )
    expect(summarizeParams(undefined)).toBe("(unknown)")
    expect(summarizeParams([])).toBe("-")
  })
})

describe("record files for data ingest", () => {
  it("reads a JSON array, a single JSON object, and NDJSON", () => {
    expect(parseRecords("a.json", `[{"a":1},{"b":2}]`)).toEqual({ ok: true, records: [{ a: 1 }, { b: 2 }] })
    expect(parseRecords("a.json", `{"a":1}`)).toEqual({ ok: true, records: [{ a: 1 }] })
    expect(parseRecords("a.txt", `{"a":1}\n\n{"b":2}\r\n`)).toEqual({ ok: true, records: [{ a: 1 }, { b: 2 }] })
    // .ndjson is read line by line even when the whole file is one JSON value.
    expect(parseRecords("a.ndjson", `[1]`)).toEqual({ ok: true, records: [[1]] })
  })

  it("names the line that is not JSON", () => {
    expect(parseRecords("r.ndjson", `{"a":1}\n{oops}\n`)).toMatchObject({ ok: false, message: expect.stringMatching(/^r\.ndjson:2: not JSON/) })
  })
})

describe("download file names", () => {
  it("takes filename* first, then filename, and keeps only a safe base name", () => {
    expect(filenameOf(`attachment; filename="a.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`)).toBe("résumé.pdf")
    expect(filenameOf(`attachment; filename="say \\"hi\\".txt"`)).toBe(`say "hi".txt`)
    expect(filenameOf(`attachment; filename=plain.csv`)).toBe("plain.csv")
    expect(filenameOf(`attachment; filename="../../etc/passwd"`)).toBe("passwd")
    expect(filenameOf(`attachment; filename="..\\\\..\\\\boot.ini"`)).toBe("boot.ini")
    expect(filenameOf(`attachment; filename=".."`)).toBeUndefined()
    expect(filenameOf("attachment")).toBeUndefined()
    expect(filenameOf(undefined)).toBeUndefined()
  })
})

describe("the timeline renderer", () => {
  // A producer's event; its position (the timeline's order) is its seq unless said otherwise.
  const event = (seq: number, type: string, payload: Record<string, unknown>, groupKey?: string, position = String(seq)): TaskEvent => ({
    taskId: "t",
    type,
    source: "worker",
    seq,
    position,
    origin: "producer",
    payload,
    createdAt: `2026-11-01T09:00:0${seq}Z`,
    ...(groupKey !== undefined ? { groupKey } : {})
  })

  it("prints each event once in timeline (position) order and grows one line per reasoning group", () => {
    const r = makeTimelineRenderer()
    let out = r.push([event(2, "reasoning.delta", { text: "Hello" }, "g"), event(1, "step.completed", { step: "a" })])
    out += r.push([event(1, "step.completed", { step: "a" }), event(3, "reasoning.delta", { text: " world" }, "g")])
    out += r.push([event(4, "reasoning.delta", { text: "Other" }, "h"), event(5, "reasoning.delta", { delta: "!" }, "h")])
    out += r.push([event(6, "source.submitted", { source: "receipts" })])
    out += r.push([event(7, "reasoning.delta", { text: "tail" }, "g")])
    out += r.close()
    expect(out).toBe(
      [
        `#1 09:00:01 step.completed [worker] {"step":"a"}`,
        `#2 09:00:02 worker (g) ▸ Hello world`,
        `#4 09:00:04 worker (h) ▸ Other!`,
        `#6 09:00:06 source.submitted [worker] {"source":"receipts"}`,
        `#7 09:00:07 worker (g) ▸ tail`,
        ""
      ].join("\n")
    )
    expect(r.close()).toBe("")
  })

  it("prints an event that arrives late (a lower seq stored after a higher one) when it arrives, once", () => {
    const r = makeTimelineRenderer()
    const first = r.push([event(1, "a", {}), event(3, "c", {})])
    // The store puts a late lower seq after what was there: its position is the later one.
    const second = r.push([event(1, "a", {}), event(3, "c", {}), event(2, "b", {}, undefined, "4")])
    expect(first.split("\n").filter(Boolean)).toHaveLength(2)
    expect(second).toBe("#2 09:00:02 b [worker] {}\n")
    expect(r.push([event(2, "b", {}, undefined, "4")])).toBe("")
  })

  it("orders by position, not by seq: the gateway's records (seq = position) and producers' seqs interleave as stored", () => {
    const r = makeTimelineRenderer()
    const out = r.push([event(900, "x", {}, undefined, "3"), event(5, "y", {}, undefined, "2"), event(1, "z", {}, undefined, "10")])
    expect(out.split("\n").filter(Boolean).map((l) => l.split(" ")[0])).toEqual(["#5", "#900", "#1"])
  })
})

describe("agent URIs", () => {
  it("splits <kind>://<native-id>, lowercasing the kind", () => {
    expect(parseAgentUri("claude://agent_123")).toEqual({ kind: "claude", nativeId: "agent_123", externalRef: "claude://agent_123" })
    expect(parseAgentUri("OpenAI://asst/with/slashes")).toEqual({
      kind: "openai",
      nativeId: "asst/with/slashes",
      externalRef: "openai://asst/with/slashes"
    })
    expect(parseAgentUri("claude:agent")).toBeUndefined()
    expect(parseAgentUri("://x")).toBeUndefined()
    expect(parseAgentUri("claude://")).toBeUndefined()
    expect(parseAgentUri("1abc://x")).toBeUndefined()
  })
})

describe("an API error on stderr", () => {
  const printed = async (error: unknown) => {
    const lines: Array<string> = []
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      lines.push(String(chunk))
      return true
    })
    try {
      return { code: await Effect.runPromise(reportFailure(error)), text: lines.join("") }
    } finally {
      spy.mockRestore()
    }
  }

  it("names the current status once: not again when the message says it", async () => {
    expect(await printed(new BadRequest({ message: "Row in status APPROVED cannot be edited", currentStatus: "APPROVED" }))).toEqual({
      code: 1,
      text: "svc: Row in status APPROVED cannot be edited [400 Bad Request]\n"
    })
    expect((await printed(new BadRequest({ message: "Task is COMPLETED with no step to decide", currentStatus: "COMPLETED" }))).text)
      .toBe("svc: Task is COMPLETED with no step to decide [400 Bad Request]\n")
    // A message that does not say it still gets it.
    expect((await printed(new BadRequest({ message: "Current step is not a table step", currentStatus: "IN_PROGRESS" }))).text)
      .toBe("svc: Current step is not a table step (current status: IN_PROGRESS) [400 Bad Request]\n")
  })
})
