/**
 * Who a connection or a request comes from, for the limits kept per client.
 *
 * - A connection (SVC_MAX_CONNECTIONS_PER_CLIENT): its socket's remote address (`clientKey`). An
 *   IPv4 address (also written IPv4-mapped, `::ffff:1.2.3.4`) is one client; an IPv6 address
 *   counts by its /64 prefix, since one host is usually given a whole /64 and could otherwise
 *   take a fresh address for every connection.
 * - A request (failed agent authentications at /mcp, the share of the body budget, the share of
 *   the event streams): by default the socket's peer address. Behind a reverse proxy every client
 *   has the proxy's address, so one noisy client would spend everyone's share:
 *   `SVC_CLIENT_ADDRESS_HEADER` (e.g. `x-forwarded-for`) names the header the trusted proxies
 *   write, and `SVC_TRUSTED_PROXY_HOPS` how many of them stand in front. Each proxy appends the
 *   address it saw, so the client is the entry that many places from the right; entries further
 *   left are whatever the client sent and are never trusted. Off by default: without a proxy that
 *   overwrites it, the header is the caller's to choose (`clientAddress`, `addressBucket`).
 */
import { isIP, isIPv4, isIPv6 } from "node:net"

/** The eight 16-bit groups of an IPv6 address, as numbers; undefined when it is not one. */
const ipv6Groups = (address: string): Array<number> | undefined => {
  const zone = address.indexOf("%")
  const text = zone === -1 ? address : address.slice(0, zone)
  if (!isIPv6(text)) return undefined
  // An embedded IPv4 tail (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) is two groups.
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  const body = v4 === null
    ? text
    : text.slice(0, v4.index) +
      `${((Number(v4[1]) << 8) | Number(v4[2])).toString(16)}:${((Number(v4[3]) << 8) | Number(v4[4])).toString(16)}`
  const [head, tail] = body.split("::") as [string, string | undefined]
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)))
  const left = parse(head)
  const right = tail === undefined ? [] : parse(tail)
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right]
}

/** The key a connection from `remoteAddress` is counted under. */
export const clientKey = (remoteAddress: string | undefined): string => {
  if (remoteAddress === undefined || remoteAddress === "") return "unknown"
  if (isIPv4(remoteAddress)) return remoteAddress
  const groups = ipv6Groups(remoteAddress)
  if (groups === undefined) return remoteAddress
  // IPv4-mapped: the IPv4 client itself.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join(".")
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`
}

export interface ClientAddressSettings {
  /** Lower-case header name; undefined: the socket address only. */
  readonly header: string | undefined
  /** Trusted proxies in front of the gateway (>= 1). */
  readonly hops: number
}

/** An IP from a header entry (`1.2.3.4`, `::1`, `[::1]:443`, `1.2.3.4:80`), or undefined. */
const ipOf = (entry: string): string | undefined => {
  const e = entry.trim()
  if (isIP(e) !== 0) return e
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(e)?.[1]
  if (bracketed !== undefined && isIP(bracketed) === 6) return bracketed
  const v4 = /^([\d.]+):\d+$/.exec(e)?.[1]
  return v4 !== undefined && isIP(v4) === 4 ? v4 : undefined
}

/** The client address of a request: the trusted header's entry when configured and well-formed, else the socket's. */
export const clientAddress = (
  socketAddress: string | undefined,
  headers: Readonly<Record<string, string | undefined>>,
  settings: ClientAddressSettings
): string => {
  const fallback = socketAddress ?? "unknown"
  if (settings.header === undefined) return fallback
  const value = headers[settings.header]
  if (value === undefined || value.trim() === "") return fallback
  const entries = value.split(",")
  // Fewer entries than proxies: all of them were written by trusted proxies; the leftmost is the client.
  const entry = entries[Math.max(0, entries.length - settings.hops)]!
  return ipOf(entry) ?? fallback
}

/** 8 hextets of an IPv6 address (zone dropped, an embedded IPv4 as two). */
const hextets = (ip: string): ReadonlyArray<string> => {
  const groups = (part: string) =>
    part === "" ? [] : part.split(":").flatMap((g) => {
      if (!g.includes(".")) return [g]
      const [a, b, c, d] = g.split(".").map(Number) as [number, number, number, number]
      return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)]
    })
  const [head = "", tail] = ip.split("%")[0]!.split("::")
  const h = groups(head)
  const t = tail === undefined ? [] : groups(tail)
  return [...h, ...Array<string>(Math.max(0, 8 - h.length - t.length)).fill("0"), ...t].map((g) => g.padStart(4, "0"))
}

/**
 * The key failures are counted under: an IPv4 address as itself (IPv4-mapped IPv6 included), an
 * IPv6 address by its /64, the block one subscriber usually holds, so rotating addresses within it
 * buys nothing; anything else as given.
 */
export const addressBucket = (address: string): string => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1]
  if (mapped !== undefined) return mapped
  if (isIP(address.split("%")[0]!) !== 6) return address
  return `${hextets(address.toLowerCase()).slice(0, 4).join(":")}::/64`
}
