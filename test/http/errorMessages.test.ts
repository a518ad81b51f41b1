/**
 * Error bodies do not amplify input: a value the client sent is quoted once, at most
 * MAX_QUOTED_CHARS characters of it (then `…`); a decode error lists at most
 * MAX_LISTED_ISSUES problems; every message is at most MAX_MESSAGE_CHARS characters.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { PAYLOAD_PARSE_OPTIONS } from "../../src/api/dtos.js"
import { NotFound } from "../../src/api/errors.js"
import { boundMessage, describeIssues, MAX_LISTED_ISSUES, MAX_MESSAGE_CHARS } from "../../src/http/errors/errorMessages.js"
import { toResponse } from "../../src/http/errors/errorResponse.js"
import { clip, MAX_QUOTED_CHARS } from "../../src/lib/quoted.js"
import { expectError, raw, withGateway } from "../support/gateway.js"
import { ACME_US, EXPENSE_TASK } from "../support/world.js"

const MiB = 1024 * 1024
const big = (c: string, n = MiB) => c.repeat(n)

/** How many times a run of `c` of at least 16 characters appears in `text`. */
const runsOf = (text: string, c: string) => (text.match(new RegExp(`${c}{16,}`, "g")) ?? []).length

/** The quoted prefix must be exactly MAX_QUOTED_CHARS characters followed by `…`. */
const expectClippedOnce = (message: string, c: string) => {
  expect(runsOf(message, c)).toBe(1)
  expect(message).toContain(`${c.repeat(MAX_QUOTED_CHARS)}…`)
  expect(message).not.toContain(c.repeat(MAX_QUOTED_CHARS + 1))
}

/** The SchemaError the builder's decoding would make for `input` against `schema`. */
const decodeError = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, input: unknown): Schema.SchemaError => {
  // The builder's options: Effect 4 quotes the value only when the decode reports its input.
  const result = Schema.decodeUnknownResult(schema, PAYLOAD_PARSE_OPTIONS)(input)
  if (Result.isSuccess(result)) throw new Error("expected a decode failure")
  return result.failure
}

/** The issues Schema's formatter reports for `e`, one per path and complaint. */
const formatted = (e: Schema.SchemaError) => SchemaIssue.makeFormatterStandardSchemaV1()(e.issue).issues

describe("what the schema formatter says, and why a value came out twice", () => {
  // Effect 3's formatter reported a union once per member, each with the whole value (a literal
  // union; `T | undefined` for every optional field): those were the doubled echoes. Effect 4's
  // reports such a union once; the message must still quote the value once, cut.
  it("a literal union: one problem, the alternatives joined, the value quoted once and cut", () => {
    const e = decodeError(Schema.Struct({ type: Schema.Literals(["approved", "rejected"]) }), { type: big("x") })
    expect(formatted(e)).toHaveLength(1)
    const message = describeIssues(e)
    expect(message).toBe(`type: Expected "approved" | "rejected", actual "${"x".repeat(MAX_QUOTED_CHARS)}…"`)
  })

  it("an optional field over its maxLength: once, without the `undefined` alternative JSON cannot send", () => {
    const e = decodeError(Schema.Struct({ c: Schema.optional(Schema.String.check(Schema.isMaxLength(10))) }), { c: big("x") })
    expect(formatted(e)).toHaveLength(1)
    const message = describeIssues(e)
    expect(message).toBe(`c: Expected a string at most 10 character(s) long, actual "${"x".repeat(MAX_QUOTED_CHARS)}…"`)
  })

  it("a wrong type: the actual value (an object here) cut as a whole", () => {
    const e = decodeError(Schema.Struct({ n: Schema.Number }), { n: { a: big("x"), b: big("y") } })
    const message = describeIssues(e)
    expect(message.startsWith("n: Expected number, actual {\"a\":\"xxx")).toBe(true)
    expect(message.length).toBeLessThan(200)
    expect(runsOf(message, "y")).toBe(0)
  })

  it("a refinement with its own message: no value echoed at all", () => {
    const Uuid = Schema.String.check(Schema.makeFilter(() => false, { message: "must be a UUID" }))
    expect(describeIssues(decodeError(Schema.Struct({ id: Uuid }), { id: big("x") }))).toBe("id: must be a UUID")
  })

  it("a union of structs: each branch's complaint once, values cut", () => {
    const U = Schema.Union([Schema.Struct({ a: Schema.String }), Schema.Struct({ b: Schema.Number })])
    const message = describeIssues(decodeError(U, { a: 1, b: big("x") }))
    expectClippedOnce(message, "x")
    expect(message.length).toBeLessThan(600)
  })

  it("an unexpected key as long as the body: the field path cut too", () => {
    const message = describeIssues(decodeError(Schema.Struct({ a: Schema.optional(Schema.String) }), { [big("k")]: 1 }))
    expectClippedOnce(message, "k")
  })

  it("many problems: the first MAX_LISTED_ISSUES, then how many more", () => {
    const S = Schema.Struct({ items: Schema.Array(Schema.Struct({ n: Schema.Number })) })
    const message = describeIssues(decodeError(S, { items: Array.from({ length: 500 }, (_, i) => ({ n: `${i}${big("x", 1000)}` })) }))
    expect(message).toMatch(new RegExp(`; and ${500 - MAX_LISTED_ISSUES} more$`))
    expect(message.split("; ")).toHaveLength(MAX_LISTED_ISSUES + 1)
    expect(message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS)
  })

  it("past a thousand problems only the first thousand are formatted, the rest counted: the same message", () => {
    // Half a million unknown keys (within SVC_MAX_JSON_ITEMS) took 2-3 s to format for ten lines.
    // A payload is decoded as the union of its endpoint's schemas: one, here as there.
    const S = Schema.Struct({ a: Schema.optional(Schema.String) })
    for (const n of [999, 1_000, 1_001, 50_000]) {
      const value = Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))
      for (const schema of [S, Schema.Union([S])]) {
        const message = describeIssues(decodeError(schema, value))
        expect(message.startsWith("k0: is unexpected; k1: is unexpected"), message.slice(0, 80)).toBe(true)
        expect(message, `${n} keys`).toMatch(new RegExp(`; and ${n - MAX_LISTED_ISSUES} more$`))
      }
    }
    // Two members: the problems cut are counted, not merged across the members (at least as many).
    const two = describeIssues(decodeError(Schema.Union([S, Schema.Struct({ b: Schema.optional(Schema.Number) })]), {
      ...Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i]))
    }))
    expect(Number(two.match(/; and (\d+) more$/)?.[1])).toBeGreaterThanOrEqual(5_000 - MAX_LISTED_ISSUES)
  })

  it("a cut never splits an escape sequence or a surrogate pair", () => {
    for (const filler of ["\\", "\"", "é", "\u0001", "😀"]) {
      for (let pad = 0; pad < 8; pad++) {
        const value = "a".repeat(pad) + filler.repeat(200)
        const message = describeIssues(decodeError(Schema.Struct({ n: Schema.Number }), { n: value }))
        const quoted = message.slice(message.indexOf("actual ") + "actual ".length)
        // Still one well-formed JSON string, and what it holds is a prefix of the value.
        const inner = JSON.parse(quoted) as string
        expect(inner.endsWith("…")).toBe(true)
        expect(value.startsWith(inner.slice(0, -1))).toBe(true)
        expect(inner.length).toBeLessThanOrEqual(MAX_QUOTED_CHARS + 1)
      }
    }
  })
})

describe("every error message is bounded", () => {
  it("toResponse bounds any error's message: long quoted values cut, the whole capped", () => {
    const quoted = toResponse(new NotFound({ message: `Workflow ${JSON.stringify(big("w"))} not found` }))
    const body = JSON.parse(new TextDecoder().decode((quoted.body as any).body))
    expect(body).toEqual({ statusCode: 404, error: "Not Found", message: `Workflow "${"w".repeat(MAX_QUOTED_CHARS)}…" not found` })
    expect(boundMessage(big("z")).length).toBe(MAX_MESSAGE_CHARS + 1)
    expect(boundMessage(big("z")).endsWith("…")).toBe(true)
    expect(clip("short", 10)).toBe("short")
  })

  it.effect("HTTP: a 1 MiB string in a length-limited field answers a small 400 quoting it once", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const cases = [
          [`/v1/tasks/${EXPENSE_TASK}/action`, { type: "approved", comments: big("x") }, "comments"],
          [`/v1/tasks/${EXPENSE_TASK}/action`, { type: big("x") }, "type"],
          [`/v1/tasks/${EXPENSE_TASK}/events`, { type: big("x"), source: "w", seq: 1, payload: {} }, "type"],
          [`/v1/tasks/${EXPENSE_TASK}/events`, { type: "t", source: "w", seq: big("x"), payload: {} }, "seq"],
          [`/v1/tasks/${EXPENSE_TASK}/data/ingest`, { data: big("x") }, "data"],
          [`/v1/entities/${ACME_US}/tasks`, { workflowId: big("x") }, "workflowId"]
        ] as const
        for (const [path, body, field] of cases) {
          const res = yield* raw("POST", path, body)
          expectError(res, 400, "Bad Request", field)
          expect(res.bytes.length, `${path} ${field}`).toBeLessThan(1024)
          expectClippedOnce(res.body.message, "x")
        }
      }), { config: { maxBodyBytes: 4 * MiB } }))

  it.effect("HTTP: a long task id in a path is not echoed past the bound either", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const res = yield* raw("GET", `/v1/tasks/not-a-uuid-${"x".repeat(1500)}/ui`)
        expectError(res, 400, "Bad Request", "taskId")
        expect(res.bytes.length).toBeLessThan(1024)
        const missing = yield* raw("GET", `/v1/${"x".repeat(3000)}`)
        expectError(missing, 404, "Not Found")
        expect(missing.bytes.length).toBeLessThan(512)
      })
    ))
})

describe("messages as Effect 3 worded them (the differential run against main)", () => {
  const message = (res: { readonly body: unknown }) => (res.body as { message: string }).message

  it.effect("an unknown key of a DTO with checks lists the keys it takes; a checked id of the wrong type is its type", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const data = Buffer.from("x").toString("base64")
        const upload = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/files`, { source: "r", data, x: 1 })
        expectError(upload, 400, "Bad Request", "x: is unexpected")
        expect(message(upload)).toBe(
          `x: is unexpected, expected: "source" | "fileName" | "contentType" | "period" | "schemaSlug" | "signalTaskId" | "signalName" | "data"`
        )
        const ingest = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/data/ingest`, { kind: "k", records: [] })
        expect(message(ingest)).toBe(
          `records: is unexpected, expected: "data" | "events" | "sourceRef" | "kind" | "signalTaskId" | "signalName"`
        )
        const period = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/files`, { source: "r", data, period: 5 })
        expect(message(period)).toBe("period: Expected string, actual 5")
        const row = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/row-action`, { ledger: "expenses", action: "reject_row", rowId: 5 })
        expect(message(row)).toBe("rowId: Expected string, actual 5")
      })
    ))

  it.effect("a query literal names the values and quotes the one sent; a too-long task id is that one problem", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const status = yield* raw("GET", `/v1/entities/${ACME_US}/tasks?status=BOGUS`)
        expect(message(status)).toBe(`status: Expected "IN_PROGRESS" | "COMPLETED" | "FAILED", actual "BOGUS"`)
        const long = yield* raw("GET", `/v1/tasks/${"x".repeat(3000)}/ui`)
        expect(message(long)).toBe("taskId: must be at most 2048 characters")
      })
    ))
})
