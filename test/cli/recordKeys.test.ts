/**
 * `svc data ingest` reads its records file with object keys as written: an NDJSON line is parsed
 * on its own, and after a line with a backslash key V8's JSON.parse (Node 24) read the next
 * line's `"\""` as `\` (src/api/jsonParse.ts), so the record was sent, and stored, with another key.
 */
import { describe, expect, it } from "vitest"
import { parseRecords } from "../../src/cli/commands/data.js"

describe("a records file with escaped keys", () => {
  it("is read with its keys as written, line after line", () => {
    const read = parseRecords("keys.ndjson", String.raw`{"h":[],"\\":0}` + "\n" + String.raw`{"h":1,"\"":2}` + "\n" + String.raw`{"h":[],"\t":3}`)
    expect(read).toEqual({ ok: true, records: [{ h: [], "\\": 0 }, { h: 1, "\"": 2 }, { h: [], "\t": 3 }] })
  })
})
