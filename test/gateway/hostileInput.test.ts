/**
 * One table of hostile inputs per class of defect found by attacking the gateway (prototype
 * keys, deep nesting, header-bound values, text fidelity, non-JSON bodies, unknown keys, state
 * rules). Each row asserts the exact 4xx or the exact round trip, so a class that comes back
 * fails a named test.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { expectError, raw, withGateway } from "../support/gateway.js"
import {
  ACME_US,
  COMPLETED_TASK,
  EXPENSE_TASK,
  ROW_NEEDS_ATTENTION
} from "../support/world.js"

const T = EXPENSE_TASK
const json = { "content-type": "application/json" }

/** A body sent as exact bytes with the given Content-Type. */
const rawBytes = (method: "POST" | "PATCH", path: string, bytes: Uint8Array, contentType: string) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const res = yield* http.execute(
      HttpClientRequest.make(method)(path).pipe(HttpClientRequest.bodyUint8Array(bytes, contentType))
    )
    const text = yield* res.text
    return { status: res.status, body: JSON.parse(text) as any }
  }).pipe(Effect.orDie)

const nested = (depth: number, leaf: unknown = 1): unknown => {
  let v: unknown = leaf
  for (let i = 0; i < depth; i++) v = { a: v }
  return v
}
/** The same nesting as JSON text, built without recursion (deep enough to overflow a recursive walk). */
const nestedText = (depth: number) => `${"{\"a\":".repeat(depth)}1${"}".repeat(depth)}`

const event = (seq: number, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: "step.completed",
  source: "worker",
  seq,
  payload: {},
  ...extra
})

/** A valid body per JSON endpoint: hostile variants are made from these. */
const endpoints: ReadonlyArray<readonly [string, "POST" | "PATCH", string, Record<string, unknown>]> = [
  ["create task", "POST", `/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } }],
  ["row action", "POST", `/v1/tasks/${T}/row-action`, {
    ledger: "expenses",
    action: "edit_cell",
    rowId: ROW_NEEDS_ATTENTION,
    field: "merchant",
    value: "Blue Bottle"
  }],
  ["event", "POST", `/v1/tasks/${T}/events`, event(801)],
  ["upload", "POST", `/v1/tasks/${T}/files`, { source: "receipts", data: "aGk=" }],
  ["ingest", "POST", `/v1/tasks/${T}/files/ingest`, { source: "receipts", fileRef: { provider: "inline_base64", data: "aGk=" } }],
  ["data ingest", "POST", `/v1/tasks/${T}/data/ingest`, { data: { amount: 1 } }],
  ["subledger edit", "PATCH", `/v1/subledgers/expenses/${ROW_NEEDS_ATTENTION}`, { field: "merchant", value: "x" }],
  ["gl session", "POST", "/v1/gl/connect/session", { serviceId: "xero" }],
  // Last: approving moves the task past its table step.
  ["action", "POST", `/v1/tasks/${T}/action`, { type: "approved" }],
]

describe("class: object-prototype keys are data or refused, never interpreted", () => {
  it.effect("__proto__ anywhere in a body is a 400 naming its path, on every JSON endpoint", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const [name, method, path, body] of endpoints) {
          const text = JSON.stringify(body).replace(/^\{/, "{\"__proto__\":{\"x\":1},")
          const res = yield* raw(method, path, text)
          expectError(res, 400, "Bad Request", "__proto__")
          expect(res.body.message, name).toContain("not allowed")
        }
        // Nested, where it used to satisfy a required start param.
        const inContext = yield* raw(
          "POST",
          `/v1/entities/${ACME_US}/tasks`,
          "{\"workflowId\":\"expense-review\",\"context\":{\"__proto__\":{\"period\":\"2026-11\"}}}"
        )
        expectError(inContext, 400, "Bad Request", "context.__proto__")
      })
    ))

  it.effect("a required start param is satisfied only by an own key, not by an Object.prototype member", () =>
    withGateway(() =>
      Effect.gen(function*() {
        // A workflow param named like a prototype member is not in the fixture; the rule is own keys:
        const res = yield* raw("POST", `/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { toString: "x" } })
        expectError(res, 400, "Bad Request", "context.period")
      })
    ))

  it.effect("a subledger field or ledger named after an Object.prototype member is an ordinary unknown name", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const field of ["valueOf", "constructor", "toString", "hasOwnProperty", "__defineGetter__", "isPrototypeOf"]) {
          const patch = yield* raw("PATCH", `/v1/subledgers/expenses/${ROW_NEEDS_ATTENTION}`, { field, value: 1 })
          expectError(patch, 400, "Bad Request", "not editable", { code: "INVALID_FIELD" })
          const edit = yield* raw("POST", `/v1/tasks/${T}/row-action`, {
            ledger: "expenses",
            action: "edit_cell",
            rowId: ROW_NEEDS_ATTENTION,
            field,
            value: 1
          })
          expectError(edit, 400, "Bad Request", "not editable", { code: "INVALID_FIELD" })
        }
        const viaString = yield* raw("PATCH", `/v1/subledgers/expenses/${ROW_NEEDS_ATTENTION}`, "{\"field\":\"__proto__\",\"value\":1}")
        expectError(viaString, 400, "Bad Request", "not editable", { code: "INVALID_FIELD" })
        for (const ledger of ["constructor", "toString", "__proto__", "valueOf"]) {
          expectError(yield* raw("POST", `/v1/subledgers/${ledger}/${ROW_NEEDS_ATTENTION}/reject`), 404, "Not Found")
          expectError(
            yield* raw("PATCH", `/v1/subledgers/${ledger}/${ROW_NEEDS_ATTENTION}`, { field: "merchant", value: "x" }),
            404,
            "Not Found"
          )
        }
      })
    ))

  it.effect("prototype-member keys in free-form payloads are kept byte-exact", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const payload = { constructor: { prototype: 1 }, toString: "s", valueOf: null, hasOwnProperty: [1] }
        const posted = yield* raw("POST", `/v1/tasks/${T}/events`, event(7, { payload }))
        expect(posted.status).toBe(200)
        const listed = yield* raw("GET", `/v1/tasks/${T}/events`)
        const stored = listed.body.events.find((e: any) => e.seq === 7)
        expect(JSON.stringify(stored.payload)).toBe(JSON.stringify(payload))
      })
    ))
})

describe("class: deeply nested JSON is a 400 naming the limit, never a stack overflow", () => {
  it.effect("10,000 levels on every JSON endpoint, in a free-form field and at the top", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const deep = nestedText(10_000)
        for (const [name, method, path] of endpoints) {
          const top = yield* raw(method, path, deep)
          expectError(top, 400, "Bad Request", "deeper than 64 levels")
          const inside = yield* raw(method, path, `{"payload":${deep},"data":${deep}}`)
          expect(inside.status, name).toBe(400)
          expect(inside.body.message).toContain("SVC_MAX_JSON_DEPTH")
        }
      })
    ))

  it.effect("nesting within the limit is accepted and stored exactly; one more level is refused", () =>
    withGateway(() =>
      Effect.gen(function*() {
        // The body is level 1, its payload level 2: 63 nested objects make 64 levels.
        const ok = yield* raw("POST", `/v1/tasks/${T}/events`, event(3, { payload: nested(63) }))
        expect(ok.status).toBe(200)
        const listed = yield* raw("GET", `/v1/tasks/${T}/events`)
        expect(listed.body.events.find((e: any) => e.seq === 3).payload).toEqual(nested(63))
        const over = yield* raw("POST", `/v1/tasks/${T}/events`, event(4, { payload: nested(64) }))
        expectError(over, 400, "Bad Request", "deeper than 64 levels")
      })
    ))

  it.effect("the depth limit is a setting", () =>
    withGateway(() =>
      Effect.gen(function*() {
        expectError(yield* raw("POST", `/v1/tasks/${T}/events`, event(5, { payload: nested(4) })), 400, "Bad Request", "deeper than 4 levels")
        expect((yield* raw("POST", `/v1/tasks/${T}/events`, event(5, { payload: nested(3) }))).status).toBe(200)
      }), { config: { maxJsonDepth: 4 } }))
})

describe("class: a body of more items than SVC_MAX_JSON_ITEMS is a 413 before its parse", () => {
  it.effect("the item limit is a setting: one item past it is refused, at it accepted", () =>
    withGateway(() =>
      Effect.gen(function*() {
        // The event's own 9 items (the body, 4 keys and their values) and its payload's 2 and rows.
        const payload = (n: number) => ({ rows: Array.from({ length: n }, (_, i) => i) })
        expect((yield* raw("POST", `/v1/tasks/${T}/events`, event(8, { payload: payload(1_000 - 11) }))).status).toBe(200)
        const over = yield* raw("POST", `/v1/tasks/${T}/events`, event(9, { payload: payload(1_000 - 10) }))
        expectError(over, 413, "Payload Too Large", "more than 1000 items")
        expect(over.body.message).toContain("SVC_MAX_JSON_ITEMS")
        // Keys written with an escape count 8: 9 + 9n items in about 10n bytes, under twice the
        // limit in bytes (a body that small was not counted at all).
        const escaped = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`\n${i}`, 0]))
        expect((yield* raw("POST", `/v1/tasks/${T}/events`, event(10, { payload: escaped(110) }))).status).toBe(200)
        const escapedOver = JSON.stringify(event(11, { payload: escaped(111) }))
        expect(escapedOver.length).toBeLessThan(2 * 1_000)
        expectError(yield* raw("POST", `/v1/tasks/${T}/events`, escapedOver), 413, "Payload Too Large", "more than 1000 items")
      }), { config: { maxJsonItems: 1_000 } }))
})

describe("class: header-bound values are checked at input so that everything stored can be served", () => {
  const upload = (extra: Record<string, unknown>) => raw("POST", `/v1/tasks/${T}/files`, { source: "receipts", data: "aGk=", ...extra })

  it.effect("contentType must be an RFC 9110 media type", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const bad = [
          "text/plain\r\nx-injected: 1",
          "text/plain; a=\u0001",
          "text/plain; charset=\"unterminated",
          "text/plain; a=é",
          "text",
          "text/",
          "/plain",
          "text/pl ain",
          `text/${"a".repeat(300)}`
        ]
        for (const contentType of bad) expectError(yield* upload({ contentType }), 400, "Bad Request", "contentType")
      })
    ))

  it.effect("a valid media type with parameters is stored and served exactly", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const contentType of ["text/plain; charset=\"utf-8\"", "application/vnd.a+json;q=1 ; x=\"a\\\"b\"", "image/png"]) {
          const up = yield* upload({ contentType, fileName: "a.bin" })
          expect(up.status).toBe(201)
          expect(up.body.contentType).toBe(contentType)
          const down = yield* raw("GET", up.body.downloadUrl)
          expect(down.status).toBe(200)
          expect(down.headers["content-type"]).toBe(contentType)
          expect(down.text).toBe("hi")
        }
      })
    ))

  it.effect("fileName must be a file name; any Unicode name round-trips through Content-Disposition", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const fileName of ["a\nb.txt", "a\rb", "tab\there", "../x", "a/b.txt", "a\\b.txt", ".", "..", "\u0085", "x".repeat(256)]) {
          expectError(yield* upload({ fileName }), 400, "Bad Request", "fileName")
        }
        // 255 characters is the limit however many UTF-16 units they take: 255 emoji are a name.
        expectError(yield* upload({ fileName: "📄".repeat(256) }), 400, "Bad Request", "fileName: Expected a string at most 255 character(s) long")
        const emoji = yield* upload({ fileName: "📄".repeat(255) })
        expect(emoji.status).toBe(201)
        expect(emoji.body.filename).toBe("📄".repeat(255))
        const name = "résumé \"final\" 📄; x=1.pdf"
        const up = yield* upload({ fileName: name })
        expect(up.body.filename).toBe(name)
        const list = yield* raw("GET", `/v1/tasks/${T}/files`)
        expect(list.body.find((d: any) => d.id === up.body.documentRef).filename).toBe(name)
        const down = yield* raw("GET", up.body.downloadUrl)
        const disposition = down.headers["content-disposition"]!
        const star = /filename\*=UTF-8''([^;]+)/.exec(disposition)![1]!
        expect(decodeURIComponent(star)).toBe(name)
      })
    ))
})

describe("class: text round-trips exactly or is refused up front", () => {
  it.effect("a NUL or a lone surrogate in any string or key is a 400 naming its path", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const cases: ReadonlyArray<readonly [string, string]> = [
          [JSON.stringify(event(901, { type: "a\u0000b" })), "type"],
          [JSON.stringify(event(901, { payload: { note: "x\u0000" } })), "payload.note"],
          [JSON.stringify(event(901, { payload: { "k\u0000": 1 } })), "payload"],
          [JSON.stringify(event(901)).replace("\"worker\"", "\"w\\ud800\""), "source"],
          [JSON.stringify(event(901)).replace("\"payload\":{}", "\"payload\":{\"a\":[\"\\udc00x\"]}"), "payload.a[0]"],
          [JSON.stringify(event(901)).replace("\"payload\":{}", "\"payload\":{\"\\ud83d\":1}"), "payload"]
        ]
        for (const [body, path] of cases) {
          const res = yield* raw("POST", `/v1/tasks/${T}/events`, body)
          expectError(res, 400, "Bad Request", path)
          expect(res.body.message).toMatch(/NUL|surrogate/)
        }
        const file = yield* raw("POST", `/v1/tasks/${T}/files`, { source: "receipts", data: "aGk=", fileName: "a\u0000.txt" })
        expectError(file, 400, "Bad Request", "fileName")
        expect((yield* raw("GET", `/v1/tasks/${T}/events`)).body.events.some((e: any) => e.seq === 901)).toBe(false)
      })
    ))

  it.effect("invalid UTF-8 is refused rather than stored as U+FFFD", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const bytes = Buffer.concat([Buffer.from("{\"type\":\"t\",\"source\":\"w\",\"seq\":1,\"payload\":{\"a\":\""), Buffer.from([0xc3, 0x28]), Buffer.from("\"}}")])
        const res = yield* rawBytes("POST", `/v1/tasks/${T}/events`, bytes, "application/json")
        expect(res).toEqual({ status: 400, body: { statusCode: 400, error: "Bad Request", message: "Malformed request body: not valid UTF-8" } })
      })
    ))

  it.effect("astral and combining text is stored exactly; the identical re-post is idempotent", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const body = event(11, { sourceLabel: "e\u0301 😀 \u202e \uFEFF", payload: { "😀": "\u{10FFFF}" } })
        const first = yield* raw("POST", `/v1/tasks/${T}/events`, body)
        expect(first.status).toBe(200)
        const again = yield* raw("POST", `/v1/tasks/${T}/events`, body)
        expect(again.status).toBe(200)
        expect(again.body.event).toEqual(first.body.event)
        const stored = (yield* raw("GET", `/v1/tasks/${T}/events`)).body.events.find((e: any) => e.seq === 11)
        expect(stored.sourceLabel).toBe(body.sourceLabel)
        expect(stored.payload).toEqual(body.payload)
      })
    ))
})

describe("class: JSON endpoints take JSON only", () => {
  it.effect("form, multipart, text and other types answer 415 on every JSON endpoint; no Content-Type reads as JSON", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const others: ReadonlyArray<readonly [string, string]> = [
          ["application/x-www-form-urlencoded", "type=approved"],
          ["multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"type\"\r\n\r\napproved\r\n--x--\r\n"],
          ["multipart/form-data; boundary=x", "--x\r\nbroken"],
          ["text/plain", "{\"type\":\"approved\"}"],
          ["application/xml", "<type>approved</type>"],
          ["application/json; charset=latin1", "{\"type\":\"approved\"}"],
          ["application/jsonp", "{}"]
        ]
        for (const [name, method, path, body] of endpoints) {
          for (const [type, text] of others) {
            const res = yield* raw(method, path, text, { "content-type": type })
            expectError(res, 415, "Unsupported Media Type", "application/json")
          }
          const plainJson = yield* raw(method, path, JSON.stringify(body), { ...json, "content-type": "application/json; charset=UTF-8" })
          expect(plainJson.status, `${name}: ${plainJson.text}`).toBeLessThan(300)
        }
      })
    ))
})

describe("class: unknown properties are a 400 naming them", () => {
  it.effect("every JSON endpoint refuses a key its DTO does not declare", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const [name, method, path, body] of endpoints) {
          const res = yield* raw(method, path, { ...body, coment: "misspelt" })
          expectError(res, 400, "Bad Request", "coment")
          expect(res.body.message, name).toContain("unexpected")
        }
        const nestedEvent = yield* raw("POST", `/v1/tasks/${T}/data/ingest`, { events: [{ data: {}, extra: 1 }] })
        expectError(nestedEvent, 400, "Bad Request", "events.0.extra")
      })
    ))

  it.effect("free-form objects keep every key", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const res = yield* raw("POST", `/v1/tasks/${T}/data/ingest`, { data: { any: 1, key: 2 }, sourceRef: { x: 1 } })
        expect(res.status).toBe(201)
      })
    ))
})

describe("state rules", () => {
  const rowAction = (taskId: string) =>
    raw("POST", `/v1/tasks/${taskId}/row-action`, { ledger: "expenses", action: "reject_row", rowId: ROW_NEEDS_ATTENTION })

  it.effect("a row action on a row of another task answers 404 like a missing row; nothing changes", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const created = yield* raw("POST", `/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } })
        const other = created.body.id as string
        yield* ws.setTask(other, { currentStep: "review_expenses" })
        expectError(yield* rowAction(other), 404, "Not Found", ROW_NEEDS_ATTENTION)
        expectError(yield* rowAction(COMPLETED_TASK), 404, "Not Found")
        // The row is untouched: its own task can still reject it.
        expect((yield* rowAction(T)).status).toBe(200)
      })
    ))

  it.effect("a row action only while the task's current step is a table step", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        yield* ws.setTask(T, { currentStep: "upload_receipts" })
        expectError(yield* rowAction(T), 400, "Bad Request", "FILE_UPLOAD", { currentStatus: "IN_PROGRESS" })
        yield* ws.setTask(T, { currentStep: null, status: "COMPLETED" })
        expectError(yield* rowAction(T), 400, "Bad Request", "COMPLETED", { currentStatus: "COMPLETED" })
      })
    ))

  it.effect("GL connect: a body-less request is valid; a known serviceId is kept; an unknown one lists the known", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const bare = yield* raw("POST", "/v1/gl/connect/session")
        expect(bare.status).toBe(200)
        expect(bare.body).toEqual({ sessionUrl: expect.any(String), consumerId: expect.any(String) })
        expect((yield* raw("POST", "/v1/gl/connect/session", "", { "content-type": "application/json" })).status).toBe(200)
        expect((yield* raw("POST", "/v1/gl/connect/session", {})).status).toBe(200)
        expect((yield* raw("POST", "/v1/gl/connect/session", { serviceId: "xero" })).status).toBe(200)
        const unknown = yield* raw("POST", "/v1/gl/connect/session", { serviceId: "mybank" })
        expectError(unknown, 400, "Bad Request", "quickbooks_online, xero, netsuite, sage_intacct")
        expect(unknown.body.message).toContain("mybank")
        void ws
      })
    ))
})
