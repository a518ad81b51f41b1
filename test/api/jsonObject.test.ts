/**
 * The contract's free-form JSON object is checked, not rebuilt: HttpApi decodes a payload through
 * `Schema.toCodecJson`, and a record schema there walked and copied every key of every object (a
 * 24 MB batch of 8,000 events of 100 keys: 0.5-0.6 s of one synchronous stretch). Its JSON form
 * (JSON Schema, OpenAPI), its messages and the values it lets through stay the record's.
 */
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import { DataIngestDto, PAYLOAD_PARSE_OPTIONS } from "../../src/api/dtos.js"
import { JsonRecord, jsonObject } from "../../src/api/jsonObject.js"
import { TaskEvent } from "../../src/api/resources.js"

const decodeJson = <S extends Schema.Top>(schema: S) =>
  Schema.decodeUnknownSync(Schema.toCodecJson(schema) as unknown as Schema.Codec<S["Type"], unknown>)

describe("the contract's JSON object", () => {
  it("decodes through the JSON codec to the very object it was given (no key-by-key copy)", () => {
    const data = { n: 1, nested: { a: [1, "two", null] }, "key with spaces": true }
    const batch = decodeJson(DataIngestDto)({ kind: "k", events: [{ data }] }, PAYLOAD_PARSE_OPTIONS)
    expect(batch.events![0]!.data).toBe(data)
    expect(batch.events![0]!.data).toEqual({ n: 1, nested: { a: [1, "two", null] }, "key with spaces": true })
  })

  it("refuses what JSON does not call an object, with the record's messages", () => {
    const named = decodeJson(Schema.Struct({ data: jsonObject({ identifier: "JsonObject" }) }))
    const plain = decodeJson(Schema.Struct({ data: jsonObject() }))
    for (const bad of [[], [1], null, "s", 1, true]) {
      expect(() => named({ data: bad })).toThrow(/Expected JsonObject/)
      expect(() => plain({ data: bad })).toThrow(/Expected object/)
    }
    expect(plain({ data: {} })).toEqual({ data: {} })
  })

  it("has the record's JSON Schema: an object, with its description, by reference when named", () => {
    const doc = Schema.toJsonSchemaDocument(Schema.Struct({
      named: jsonObject({ identifier: "JsonObject", description: "Free-form JSON object" }),
      described: jsonObject({ description: "Forwarded as it is" })
    }))
    expect(doc.schema.properties).toEqual({
      named: { $ref: "#/$defs/JsonObject" },
      described: { type: "object", description: "Forwarded as it is" }
    })
    expect(doc.definitions).toEqual({ JsonObject: { type: "object", description: "Free-form JSON object" } })
  })
})

describe("the answers' JSON objects and open records", () => {
  it("encode an event's payload as the very object stored, and its extra keys' values as they are", () => {
    const payload = { text: "reasoning ".repeat(3), items: [{ k: 1, ok: true }, { k: 2, v: null }] }
    const extra = { deep: { rows: [{ a: 1, b: "xy" }] } }
    const event = {
      taskId: "t", type: "reasoning.delta", source: "worker", seq: 1, payload,
      createdAt: "2026-12-06T00:00:00.000Z", position: "1", origin: "producer" as const, extra
    }
    const encoded = Schema.encodeUnknownSync(Schema.toCodecJson(TaskEvent))(event) as Record<string, unknown>
    expect(encoded.payload).toBe(payload)
    expect(encoded.extra).toBe(extra)
    expect(JSON.parse(JSON.stringify(encoded))).toEqual(JSON.parse(JSON.stringify(event)))
  })

  it("a record of JSON values has the JSON Schema of a record of unknown values", () => {
    const ours = Schema.toJsonSchemaDocument(Schema.Struct({ r: JsonRecord }))
    const theirs = Schema.toJsonSchemaDocument(Schema.Struct({ r: Schema.Record(Schema.String, Schema.Unknown) }))
    expect(ours).toEqual(theirs)
  })
})

