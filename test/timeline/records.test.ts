/**
 * The records the gateway vouches for (the workspace API's POST .../records, for a gateway in
 * front of a separate workspace service): only the gateway's own sources, so that a record can
 * never stand in a producer's stream, take a producer's next seq or carry a seq of its own.
 */
import { describe, expect, it } from "vitest"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { TimelineRecord } from "../../src/api/dtos.js"

const decode = (input: unknown) => Schema.decodeUnknownResult(TimelineRecord)(input)

describe("TimelineRecord", () => {
  it("takes an agent's own event and the gateway's record by their own sources", () => {
    expect(Result.isSuccess(decode({ origin: "agent", type: "note", source: "agent:2f0c", payload: {} }))).toBe(true)
    expect(Result.isSuccess(decode({ origin: "agent", type: "note", source: "agent:2f0c", seq: 4, payload: {} }))).toBe(true)
    expect(Result.isSuccess(decode({ origin: "gateway", type: "agent.action", source: "agent:2f0c", payload: {} }))).toBe(true)
    expect(Result.isSuccess(decode({ origin: "gateway", type: "task.created", source: "audit", payload: {} }))).toBe(true)
  })

  it("refuses a producer's source for either origin, and a seq on the gateway's record", () => {
    for (const input of [
      { origin: "agent", type: "note", source: "worker", payload: {} },
      { origin: "agent", type: "note", source: "agent: x", payload: {} },
      { origin: "gateway", type: "x", source: "worker", payload: {} },
      { origin: "gateway", type: "x", source: "аudit", payload: {} },
      { origin: "gateway", type: "x", source: "audit", seq: 3, payload: {} }
    ]) {
      const result = decode(input)
      expect(Result.isFailure(result), JSON.stringify(input)).toBe(true)
    }
  })
})
