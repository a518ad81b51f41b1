import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { BadRequest, BadRequestWire, NotFound, NotFoundWire } from "../../src/api/errors.js"

describe("error wire schemas", () => {
  it("encode to exactly the spec's shape (plus named extras) and decode back", () => {
    const bad = new BadRequest({ message: "nope", currentStatus: "REJECTED" })
    expect(Schema.encodeSync(BadRequestWire)(bad)).toEqual({
      statusCode: 400, message: "nope", error: "Bad Request", currentStatus: "REJECTED"
    })
    const round = Schema.decodeUnknownSync(NotFoundWire)({ statusCode: 404, message: "gone", error: "Not Found" })
    expect(round).toBeInstanceOf(NotFound)
    expect(round.message).toBe("gone")
    expect(Schema.encodeSync(NotFoundWire)(round)).toEqual({ statusCode: 404, message: "gone", error: "Not Found" })
  })
})
