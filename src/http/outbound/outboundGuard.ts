/**
 * The address guard of every outbound connection the product makes on someone's say-so: the
 * `url` ingest provider's fetches and webhook deliveries. One guard, checked where it cannot be
 * raced: when each socket connects. Requests go through a `request-filtering-agent` http(s)
 * Agent, which checks the literal IP of the URL and, for names, every address the lookup returns
 * (Node connects with `all: true` lookups), so a name that resolves to a public and a private
 * address, or re-resolves differently (DNS rebinding), is refused at connect time. Loopback,
 * RFC 1918 private, link-local (169.254.169.254 included), unique-local, multicast, CGNAT,
 * reserved, unspecified (0.0.0.0, ::) and IPv4-mapped IPv6 addresses are all "not unicast" to
 * the agent and refused. Numeric host forms (2130706433, 0177.0.0.1, 0x7f000001, 127.1) are
 * normalized to 127.0.0.1 by WHATWG URL parsing before the agent sees them.
 *
 * An allow-list of `host:port` pairs (SVC_INGEST_URL_ALLOW, SVC_WEBHOOK_URL_ALLOW) may reach
 * private addresses. The agent's own allow-list is by IP only (any port), so the pair is matched
 * here, per request, on the URL's normalized host and effective port; a matching request uses an
 * agent that permits private addresses (unspecified/meta addresses stay refused), every other
 * the strict one. An allow-listed *name* is trusted to resolve wherever the operator's DNS says.
 */
import * as Result from "effect/Result"
import type * as http from "node:http"
import type * as Https from "node:https"
import { createRequire } from "node:module"
import { BlockList, isIPv6 } from "node:net"
import type * as FilteringAgents from "request-filtering-agent"

/**
 * `node:https` and the filtering agents (an https.Agent subclass) are loaded by the first
 * outbound request, not at start: loading `node:tls` makes Node read every CA certificate it
 * trusts (about 2.5 MB of native memory, more with NODE_EXTRA_CA_CERTS), which a cell that never
 * fetches a URL or posts a webhook does not need (bench/RESULTS.md, memory per cell). `require`
 * stays a call at run time in the bundle, resolved from node_modules like the native driver.
 */
const requireLazily = createRequire(import.meta.url)

/** `node:https`, loaded on first use. */
export const httpsModule = (): typeof Https => process.getBuiltinModule("node:https")

export const defaultPort = (u: URL): string => u.port !== "" ? u.port : u.protocol === "https:" ? "443" : "80"
/** Same normalization as the allow-list entries (parseAllowEntry below). */
export const hostPortKey = (u: URL): string => `${u.hostname}:${defaultPort(u)}`
export const bareHost = (hostname: string): string =>
  hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname

/**
 * What the filtering agent says when it refuses an address. The message holds the caller's host
 * name, so the pattern is linear: the address (an IP) cannot hold `(`, so the one lazy group left
 * is tried from one place only.
 */
const FILTERED = /^DNS lookup ([^(]*)\(family:[^,]*, host:(.*?)\) is not allowed\. Because,? (?:It is |It )?(.*?)\.?$/

const errorCode = (e: unknown): string | undefined => {
  const err = e as { code?: unknown; errors?: ReadonlyArray<unknown> } | undefined
  if (typeof err?.code === "string") return err.code
  // autoSelectFamily reports every failed attempt in an AggregateError.
  if (Array.isArray(err?.errors) && err.errors.length > 0) return errorCode(err.errors[0])
  return undefined
}

export const errorMessage = (e: unknown): string => {
  if (e instanceof AggregateError && e.errors.length > 0) return errorMessage(e.errors[0])
  return e instanceof Error ? e.message : String(e)
}

/**
 * Names the kind of a refused address, for the error message only: the decision itself is the
 * filtering agent's (anything not public unicast, per ipaddr.js ranges).
 */
const KINDS: ReadonlyArray<readonly [kind: string, net: string, prefix: number, type: "ipv4" | "ipv6"]> = [
  ["loopback", "127.0.0.0", 8, "ipv4"],
  ["unspecified", "0.0.0.0", 8, "ipv4"],
  ["private (RFC 1918)", "10.0.0.0", 8, "ipv4"],
  ["private (RFC 1918)", "172.16.0.0", 12, "ipv4"],
  ["private (RFC 1918)", "192.168.0.0", 16, "ipv4"],
  ["link-local (cloud metadata range)", "169.254.0.0", 16, "ipv4"],
  ["carrier-grade NAT", "100.64.0.0", 10, "ipv4"],
  ["multicast", "224.0.0.0", 4, "ipv4"],
  ["reserved or broadcast", "240.0.0.0", 4, "ipv4"],
  ["loopback", "::1", 128, "ipv6"],
  ["unspecified", "::", 128, "ipv6"],
  ["IPv4-mapped IPv6", "::ffff:0:0", 96, "ipv6"],
  ["unique-local", "fc00::", 7, "ipv6"],
  ["link-local", "fe80::", 10, "ipv6"],
  ["multicast", "ff00::", 8, "ipv6"]
]
const kindOfAddress = (address: string): string => {
  const type = isIPv6(address) ? "ipv6" : "ipv4"
  for (const [kind, net, prefix, family] of KINDS) {
    if (family !== type) continue
    const list = new BlockList()
    list.addSubnet(net, prefix, family)
    try {
      if (list.check(address, type)) return kind
    } catch {
      break
    }
  }
  return "non-public"
}

export const describeRequestError = (e: unknown, target: URL, allowSetting = "SVC_INGEST_URL_ALLOW", what = "fetched"): string => {
  const message = errorMessage(e)
  const filtered = FILTERED.exec(message)
  const hostPort = `${target.hostname}:${defaultPort(target)}`
  if (filtered !== null) {
    const [, address = "", host, reason = ""] = filtered
    const via = host !== undefined && host !== "undefined" && host !== "" ? ` (${host} resolved to it)` : ""
    const kind = kindOfAddress(address)
    return `refused to connect to ${address}${via}: ${/^(unspecified|IPv4)/.test(kind) ? "an" : "a"} ${kind} address (${reason}); only public ` +
      `unicast addresses may be ${what} unless host:port is in ${allowSetting}`
  }
  if (/is not allowed/.test(message)) return `refused to connect to ${hostPort}: ${message}`
  const code = errorCode(e)
  switch (code) {
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EAI_NODATA":
    case "EAI_FAIL":
      return `could not resolve host ${target.hostname} (${code})`
    case "ECONNREFUSED":
      return `connection refused by ${hostPort} (ECONNREFUSED)`
    case "ECONNRESET":
    case "EPIPE":
      return `connection reset by ${hostPort} (${code})`
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `${hostPort} is unreachable (${code})`
    case "ETIMEDOUT":
      return `connection to ${hostPort} timed out (ETIMEDOUT)`
  }
  if (code !== undefined && /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(code)) {
    return `TLS failure with ${hostPort} (${code}): ${message}`
  }
  return `request to ${hostPort} failed (${code ?? "error"}): ${message}`
}

/** The guarded agents, strict and allow-listed, for http and https; made by the first request. */
export const makeOutboundAgents = (options: { readonly keepAlive?: boolean } = {}) => {
  const strict = { allowPrivateIPAddress: false, allowMetaIPAddress: false, keepAlive: options.keepAlive ?? false }
  const allowListed = { ...strict, allowPrivateIPAddress: true }
  let made: Record<"http" | "https" | "httpAllowed" | "httpsAllowed", http.Agent> | undefined
  const make = () => {
    const { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } = requireLazily("request-filtering-agent") as typeof FilteringAgents
    return {
      http: new RequestFilteringHttpAgent(strict),
      https: new RequestFilteringHttpsAgent(strict),
      httpAllowed: new RequestFilteringHttpAgent(allowListed),
      httpsAllowed: new RequestFilteringHttpsAgent(allowListed)
    }
  }
  /** The agent a request to `target` goes through: the allow-listed one only for a listed host:port. */
  return (target: URL, allow: ReadonlySet<string>): http.Agent => {
    const agents = made ??= make()
    const allowed = allow.has(hostPortKey(target))
    return target.protocol === "https:"
      ? (allowed ? agents.httpsAllowed : agents.https)
      : (allowed ? agents.httpAllowed : agents.http)
  }
}

/**
 * `host:port` → the same normalized form `hostPortKey` derives from a request URL, so that
 * `2130706433:80`, `127.0.0.1:80` and `LOCALHOST:80` compare the way WHATWG URL parsing sees them.
 */
export const parseAllowEntry = (entry: string): Result.Result<string, string> => {
  const raw = entry.trim()
  const m = /^(.+):(\d{1,5})$/.exec(raw)
  if (m === null) return Result.fail(`"${raw}" is not host:port`)
  const port = Number(m[2])
  if (port < 1 || port > 65535) return Result.fail(`"${raw}": port must be 1-65535`)
  let url: URL
  try {
    url = new URL(`http://${m[1]}/`)
  } catch {
    return Result.fail(`"${raw}": invalid host`)
  }
  if (url.username !== "" || url.password !== "" || url.port !== "" || url.pathname !== "/") {
    return Result.fail(`"${raw}": invalid host`)
  }
  return Result.succeed(`${url.hostname}:${port}`)
}

/** A comma list of host:port entries; the first bad one's message otherwise. */
export const parseAllowList = (text: string): Result.Result<ReadonlyArray<string>, string> => {
  const out: Array<string> = []
  for (const part of text.split(",")) {
    if (part.trim() === "") continue
    const parsed = parseAllowEntry(part)
    if (Result.isFailure(parsed)) return Result.fail(parsed.failure)
    out.push(parsed.success)
  }
  return Result.succeed(out)
}
