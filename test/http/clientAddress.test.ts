/** The key connections are counted under per client (src/http/server/clientAddress.ts). */
import { describe, expect, it } from "vitest"
import { clientKey } from "../../src/http/server/clientAddress.js"

describe("clientKey", () => {
  it("an IPv4 address, written plain or IPv4-mapped, is one client", () => {
    expect(clientKey("203.0.113.7")).toBe("203.0.113.7")
    expect(clientKey("::ffff:203.0.113.7")).toBe("203.0.113.7")
    expect(clientKey("::ffff:cb00:7107")).toBe("203.0.113.7")
  })

  it("an IPv6 address counts by its /64, however it is written", () => {
    expect(clientKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64")
    expect(clientKey("2001:db8:1:2:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64")
    expect(clientKey("2001:0db8:0001:0002::9")).toBe("2001:db8:1:2::/64")
    expect(clientKey("2001:db8::1")).toBe("2001:db8:0:0::/64")
    expect(clientKey("::1")).toBe("0:0:0:0::/64")
    expect(clientKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64")
    expect(clientKey("2001:db8:1:3::1")).not.toBe(clientKey("2001:db8:1:2::1"))
  })

  it("no address is one bucket", () => {
    expect(clientKey(undefined)).toBe("unknown")
  })
})
