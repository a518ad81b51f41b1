/**
 * Settings that depend on each other take their defaults from what the operator set
 * (`SVC_REQUEST_TIMEOUT_MS=4000` alone was refused because of a default header timeout of 10 s
 * the operator never set). Only two values the operator set that contradict each other are refused.
 */
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { DEFAULT_SERVER_LIMITS, serverLimitsConfig } from "../../src/http/server/ServerLimits.js"
import { readEnv } from "../fixtures/config.js"

const read = (env: Record<string, string>) => readEnv(serverLimitsConfig, env)

describe("request and header timeouts", () => {
  it("a request timeout below the default header timeout, alone: the header timeout follows it", () => {
    expect(read({ SVC_REQUEST_TIMEOUT_MS: "4000" })).toEqual(
      Result.succeed({ ...DEFAULT_SERVER_LIMITS, requestTimeoutMs: 4000, headersTimeoutMs: 4000 })
    )
  })

  it("a request timeout above the default header timeout, alone: the header timeout keeps its default", () => {
    expect(read({ SVC_REQUEST_TIMEOUT_MS: "30000" })).toEqual(Result.succeed({ ...DEFAULT_SERVER_LIMITS, requestTimeoutMs: 30000 }))
  })

  it("a header timeout above the default request timeout, alone: the request timeout follows it", () => {
    expect(read({ SVC_HEADERS_TIMEOUT_MS: "90000" })).toEqual(
      Result.succeed({ ...DEFAULT_SERVER_LIMITS, requestTimeoutMs: 90000, headersTimeoutMs: 90000 })
    )
  })

  it("both set, header timeout longer: refused, saying both were set", () => {
    const result = read({ SVC_HEADERS_TIMEOUT_MS: "5000", SVC_REQUEST_TIMEOUT_MS: "4000" })
    expect(Result.isFailure(result)).toBe(true)
    if (Result.isFailure(result)) {
      expect(result.failure.message).toContain("SVC_HEADERS_TIMEOUT_MS=5000 is not valid: expected at most SVC_REQUEST_TIMEOUT_MS (4000)")
    }
  })

  it("both set consistently: as set", () => {
    expect(read({ SVC_HEADERS_TIMEOUT_MS: "4000", SVC_REQUEST_TIMEOUT_MS: "4000" })).toEqual(
      Result.succeed({ ...DEFAULT_SERVER_LIMITS, requestTimeoutMs: 4000, headersTimeoutMs: 4000 })
    )
  })
})
