/**
 * Unknown-setting warnings for the names an operator is most likely to get wrong: the gateway's
 * own PORT and HOST carry no SVC_ prefix (SVC_PORT, SVC_HOST), and the environment is
 * case-sensitive (svc_tenant_slug is not SVC_TENANT_SLUG).
 */
import { describe, expect, it } from "vitest"
import { unknownSettingWarnings } from "../../src/config/unknownSettings.js"

describe("unknown settings, likely mistakes", () => {
  it("SVC_PORT and SVC_HOST point at PORT and HOST", () => {
    expect(unknownSettingWarnings({ SVC_PORT: "3000", SVC_HOST: "0.0.0.0" })).toEqual([
      "SVC_HOST is not a setting of this gateway and is ignored: did you mean HOST? (HOST and PORT have no SVC_ prefix)",
      "SVC_PORT is not a setting of this gateway and is ignored: did you mean PORT? (HOST and PORT have no SVC_ prefix)"
    ])
  })

  it("a setting in lower or mixed case is reported with its exact name", () => {
    expect(unknownSettingWarnings({ svc_tenant_slug: "acme", Svc_Admin_Port: "off" })).toEqual([
      "Svc_Admin_Port is not a setting of this gateway and is ignored: did you mean SVC_ADMIN_PORT? (names are case-sensitive)",
      "svc_tenant_slug is not a setting of this gateway and is ignored: did you mean SVC_TENANT_SLUG? (names are case-sensitive)"
    ])
  })

  it("a name with escapes or line breaks, or a very long one, is quoted and clipped", () => {
    const long = `SVC_${"A".repeat(3000)}`
    const [escaped, clipped] = unknownSettingWarnings({ "SVC_\u001b[31mRED\nX": "1", [long]: "1" })
    expect(escaped).toBe(
      `"SVC_\\u001b[31mRED\\nX" is not a setting of this gateway and is ignored: the closest is SVC_ACTOR; every setting is in .env.example`
    )
    expect(clipped).toMatch(/^"SVC_A{60}…" is not a setting of this gateway and is ignored: /)
    expect(clipped!.length).toBeLessThan(200)
  })

  it("a look-alike letter is shown as its escape, so the name does not read as the one suggested", () => {
    expect(unknownSettingWarnings({ "SVC_\u0410DMIN_TOKEN": "x", "SVC_ＰORT": "1" })).toEqual([
      `"SVC_\\u0410DMIN_TOKEN" is not a setting of this gateway and is ignored: did you mean SVC_ADMIN_TOKEN?`,
      `"SVC_\\uff30ORT" is not a setting of this gateway and is ignored: the closest is SVC_URL; every setting is in .env.example`
    ])
  })

  it("SVC_ alone is reported, and a known name in its own case is not", () => {
    expect(unknownSettingWarnings({ SVC_: "1", SVC_TENANT_SLUG: "acme", PORT: "1" })).toHaveLength(1)
  })
})
