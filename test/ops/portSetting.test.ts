/**
 * PORT (and SVC_WORKSPACE_PORT, read the same way) refused as on Effect 3: whatever step of
 * Config.Port the value misses (a number, an integer, the range), the one line says what it takes.
 */
import { describe, expect, it } from "vitest"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import { describeStartFailure } from "../../src/http/server/failStart.js"

const failureOf = async <A>(config: Config.Config<A>, env: Record<string, string>) => {
  const parsed = await Effect.runPromise(Effect.result(config.parse(ConfigProvider.fromEnv({ env }))))
  if (parsed._tag === "Success") throw new Error("expected the setting to be refused")
  return describeStartFailure(parsed.failure, env)
}

describe("a port setting that is not a port", () => {
  it.each(["abc", "1.5", " 80", "0", "-1", "70000"])("PORT=%j: expected a port number from 1 to 65535", async (value) => {
    // How TenantConfig, the embedded store and the admin listener read it.
    expect(await failureOf(Config.Port("PORT"), { PORT: value })).toBe(
      `PORT=${JSON.stringify(value)}: expected a port number from 1 to 65535`
    )
  })

  it("SVC_WORKSPACE_PORT says the same", async () => {
    expect(await failureOf(Config.Port("SVC_WORKSPACE_PORT"), { SVC_WORKSPACE_PORT: "x" })).toBe(
      `SVC_WORKSPACE_PORT="x": expected a port number from 1 to 65535`
    )
  })
})
