/**
 * SVC_MAX_BODY_BYTES and SVC_WORKSPACE_MAX_CONNECTIONS have upper bounds (src/config/settings.ts
 * says why each figure): a value past one is refused at start with the settings' usual line
 * naming the setting, its value and the range, as `Cannot start:` prints it.
 */
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { describeConfigError } from "../../src/config/settingErrors.js"
import { setting } from "../../src/config/settings.js"
import { tenantConfigFromEnv } from "../../src/config/TenantConfig.js"
import { readEnv } from "../fixtures/config.js"

const refusal = (env: Record<string, string>): Array<string> => {
  const read = readEnv(tenantConfigFromEnv, env)
  return Result.isFailure(read) ? describeConfigError(read.failure, env) : []
}

describe("upper bounds of the body cap and the workspace connections", () => {
  it("SVC_MAX_BODY_BYTES: 512 MiB less a MiB at most, 1e9 refused naming it", () => {
    expect(setting("SVC_MAX_BODY_BYTES").max).toBe(511 * 1024 * 1024)
    expect(refusal({ SVC_MAX_BODY_BYTES: "1000000000" })).toEqual([
      `SVC_MAX_BODY_BYTES="1000000000": expected an integer from 1 to ${511 * 1024 * 1024}`
    ])
    const atMax = readEnv(tenantConfigFromEnv, { SVC_MAX_BODY_BYTES: String(511 * 1024 * 1024) })
    expect(Result.map(atMax, (c) => c.maxBodyBytes)).toEqual(Result.succeed(511 * 1024 * 1024))
  })

  it("SVC_WORKSPACE_MAX_CONNECTIONS: 4096 at most, 1e9 and 4097 refused naming it", () => {
    expect(refusal({ SVC_WORKSPACE_MAX_CONNECTIONS: "1000000000" })).toEqual([
      `SVC_WORKSPACE_MAX_CONNECTIONS="1000000000": expected an integer from 3 to 4096`
    ])
    expect(refusal({ SVC_WORKSPACE_MAX_CONNECTIONS: "4097" })).toEqual([
      `SVC_WORKSPACE_MAX_CONNECTIONS="4097": expected an integer from 3 to 4096`
    ])
    const atMax = readEnv(tenantConfigFromEnv, { SVC_WORKSPACE_MAX_CONNECTIONS: "4096" })
    expect(Result.map(atMax, (c) => c.workspaceMaxConnections)).toEqual(Result.succeed(4096))
  })
})
