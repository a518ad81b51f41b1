/**
 * A stored Idempotency-Key result is read back with its keys as written: a result that holds a
 * key written with an escape (an event payload's `"` key echoed in an answer) is replayed as it
 * was first answered, whatever JSON the process parsed before (V8's key bug in Node 24's
 * JSON.parse: src/api/jsonParse.ts).
 */
import { describe, expect, it } from "vitest"
import { decodeResult } from "../../src/domain/idempotency.js"

describe("a stored result replayed", () => {
  it("keeps its escaped keys after the process parsed a text that sets off V8's key bug", () => {
    JSON.parse(String.raw`{"h":[],"\\":0}`)
    const stored = JSON.stringify({ h: 1, "\"": 2, payload: { h: [], "\t": 3 } })
    expect(decodeResult(stored)).toEqual({ h: 1, "\"": 2, payload: { h: [], "\t": 3 } })
  })
})
