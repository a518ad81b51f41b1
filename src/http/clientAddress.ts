/**
 * Which client a connection counts against (SVC_MAX_CONNECTIONS_PER_CLIENT): its socket's remote
 * address. An IPv4 address (also written IPv4-mapped, `::ffff:1.2.3.4`) is one client; an IPv6
 * address counts by its /64 prefix, since one host is usually given a whole /64 and could
 * otherwise take a fresh address for every connection.
 */
import { isIPv4, isIPv6 } from "node:net"

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
