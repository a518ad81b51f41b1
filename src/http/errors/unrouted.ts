/**
 * What a request the router found no route for should answer instead of a bare 404, derived
 * from an HttpApi definition (the gateway's and the workspace's alike):
 * - a path that no endpoint of the API has: 404, as before;
 * - a path some endpoint has, with another method: 405 with `Allow` listing the methods the
 *   path takes (RFC 9110 §15.5.6), HEAD included wherever GET is (the router answers HEAD
 *   with the GET route);
 * - a path with its method right that the router still refused: a path parameter longer than
 *   the router matches (find-my-way's `maxParamLength`): 400 naming the parameter.
 *
 * Routes served beside the API (pages, probes, /mcp) join it through `withRoutes`: a server
 * judges by every route it has, so `POST /readyz` is a 405 and a path none has a 404, whatever
 * the body.
 *
 * Paths are matched the way the router (find-my-way) matches them: query (`?`, `;`, `#`)
 * cut off, duplicate and trailing slashes ignored, static segments case-insensitive.
 */
import { safeDecode } from "./percentEncoding.js"

/**
 * What is read of an HttpApi: its endpoints' methods and paths. Structural, so any concrete
 * HttpApi fits (Effect 4's `HttpApi.Top` is not a supertype of a concrete API).
 */
export interface ApiRoutes {
  readonly groups: {
    readonly [group: string]: {
      readonly endpoints: { readonly [endpoint: string]: { readonly method: string; readonly path: string } }
    }
  }
}

type Segment =
  | { readonly _tag: "Static"; readonly value: string }
  | { readonly _tag: "Param"; readonly name: string; readonly optional: boolean }
  | { readonly _tag: "Wildcard" }

interface Template {
  readonly method: string
  readonly path: string
  readonly segments: ReadonlyArray<Segment>
  /** Served beside the API (withRoutes): a parameter too long for the router is a 404 there, as a missing page. */
  readonly beside: boolean
}

/** A template the request path matched, with its decoded path parameters. */
export interface PathMatch {
  readonly method: string
  readonly path: string
  readonly params: ReadonlyArray<readonly [name: string, value: string]>
  readonly beside?: boolean
}

/** A route served beside an HttpApi (a page, a probe, /mcp): its method and path template. */
export interface Route {
  readonly method: string
  readonly path: string
}

/**
 * `api`'s endpoints and the routes served beside it, as one table: what a server answers 405
 * (or routes) from, so `POST /readyz` is a 405 listing GET and HEAD like `POST /v1/health`.
 */
export const withRoutes = (api: ApiRoutes, beside: ReadonlyArray<Route>): ApiRoutes => ({
  groups: { ...api.groups, [BESIDE]: { endpoints: Object.fromEntries(beside.map((route, i) => [String(i), route])) } }
})

const BESIDE = "~beside"

/** The methods in the order `Allow` lists them. */
const METHOD_ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

const compileSegments = (path: string): ReadonlyArray<Segment> =>
  splitPath(path).map((part): Segment => {
    if (part === "*") return { _tag: "Wildcard" }
    if (part.startsWith(":")) {
      const optional = part.endsWith("?")
      return { _tag: "Param", name: part.slice(1, optional ? -1 : undefined), optional }
    }
    return { _tag: "Static", value: safeDecode(part)?.toLowerCase() ?? part.toLowerCase() }
  })

const templates = new WeakMap<object, ReadonlyArray<Template>>()

/** Every endpoint of the API as method + path template (computed once per API value). */
export const templatesOf = (api: ApiRoutes): ReadonlyArray<Template> => {
  const cached = templates.get(api)
  if (cached !== undefined) return cached
  const result: Array<Template> = []
  for (const [name, group] of Object.entries(api.groups)) {
    for (const endpoint of Object.values(group.endpoints)) {
      result.push({ method: endpoint.method, path: endpoint.path, segments: compileSegments(endpoint.path), beside: name === BESIDE })
    }
  }
  templates.set(api, result)
  return result
}


/** The path of a request URL as the router sees it, split into its (still encoded) segments. */
const splitPath = (url: string): Array<string> => {
  let path = url
  // An absolute-form target the Node adapter could not parse (`HTTP://x:99999/readyz`) reaches
  // the router whole, which drops a lower-case origin only (and a web Request's URL's).
  if (path.charCodeAt(0) !== 47) path = path.replace(/^https?:\/\/.*?\//, "/")
  // The router takes any first character as `/` (`*v1/gl` is `/v1/gl`: ../server/nodeServer.ts normalisedRouterPath).
  if (path.length > 0 && path.charCodeAt(0) !== 47) path = "/" + path.slice(1)
  const end = path.search(/[?;#]/)
  if (end !== -1) path = path.slice(0, end)
  return path.split("/").filter((part) => part !== "")
}

const matchTemplate = (template: Template, parts: ReadonlyArray<string>): PathMatch | undefined => {
  const params: Array<readonly [string, string]> = []
  const matched = (): PathMatch =>
    template.beside ? { method: template.method, path: template.path, params, beside: true } : { method: template.method, path: template.path, params }
  const segments = template.segments
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!
    const part = parts[i]
    if (segment._tag === "Wildcard") {
      params.push(["*", safeDecode(parts.slice(i).join("/")) ?? parts.slice(i).join("/")])
      return matched()
    }
    if (part === undefined) {
      return segment._tag === "Param" && segment.optional && i === segments.length - 1
        ? matched()
        : undefined
    }
    const decoded = safeDecode(part) ?? part
    if (segment._tag === "Static") {
      if (decoded.toLowerCase() !== segment.value) return undefined
    } else {
      params.push([segment.name, decoded])
    }
  }
  return parts.length === segments.length ? matched() : undefined
}

/**
 * Whether the router misses every route for these segments: it lower-cases the whole decoded
 * path to match it and cuts parameters out of the original at the lower-cased offsets, so a
 * segment before the last whose lower case is longer (`İ`, `%C4%B0`, is two characters lower
 * case) puts every later segment off by one. (A segment of our static paths is ASCII, so such a
 * segment could only have been a parameter.)
 */
const shiftsParams = (parts: ReadonlyArray<string>): boolean => {
  for (let i = 0; i < parts.length - 1; i++) {
    const part = parts[i]!
    if (!NOT_PLAIN.test(part)) continue
    const decoded = safeDecode(part) ?? part
    if (decoded.toLowerCase().length !== decoded.length) return true
  }
  return false
}

/** A segment that may change length lower-cased: an escape or a character past ASCII. */
const NOT_PLAIN = /[%\u0080-\uffff]/

/** The API's endpoints whose path template matches the request URL (any method). */
export const matchPath = (api: ApiRoutes, url: string): ReadonlyArray<PathMatch> => {
  const parts = splitPath(url)
  if (shiftsParams(parts)) return []
  const matches: Array<PathMatch> = []
  for (const template of templatesOf(api)) {
    const match = matchTemplate(template, parts)
    if (match !== undefined) matches.push(match)
  }
  return matches
}

/** Whether a matched template takes `method`: its own, and HEAD where it is GET. */
export const takes = (method: string) => {
  const wanted = method.toUpperCase() === "HEAD" ? "GET" : method.toUpperCase()
  return (m: PathMatch) => m.method.toUpperCase() === wanted
}

/** The methods `Allow` lists for these matches: each endpoint's method, HEAD wherever GET is. */
export const allowOf = (matches: ReadonlyArray<PathMatch>): ReadonlyArray<string> => {
  const methods = new Set(matches.map((m) => m.method.toUpperCase()))
  if (methods.has("GET")) methods.add("HEAD")
  const rank = (m: string) => {
    const i = METHOD_ORDER.indexOf(m)
    return i === -1 ? METHOD_ORDER.length : i
  }
  return [...methods].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
}

/**
 * Why the router found no route for `method url`, judged against the API:
 * - `NotFound`: no endpoint has this path;
 * - `MethodNotAllowed`: endpoints have it, with the methods in `allow`;
 * - `ParamTooLong`: an endpoint has this path and method, and its parameter `name` is longer
 *   than `maxParamLength` (the router's limit).
 */
export type Unrouted =
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "MethodNotAllowed"; readonly allow: ReadonlyArray<string> }
  | { readonly _tag: "ParamTooLong"; readonly name: string; readonly length: number }

export const explainUnrouted = (
  api: ApiRoutes,
  method: string,
  url: string,
  maxParamLength: number
): Unrouted => {
  const matches = matchPath(api, url)
  if (matches.length === 0) return { _tag: "NotFound" }
  const allow = allowOf(matches)
  const same = matches.filter(takes(method))
  if (same.length === 0) return { _tag: "MethodNotAllowed", allow }
  for (const match of same) {
    if (match.beside === true) continue
    for (const [name, value] of match.params) {
      if (value.length > maxParamLength) return { _tag: "ParamTooLong", name, length: value.length }
    }
  }
  return { _tag: "NotFound" }
}

/**
 * Whether a route of `routes` takes this method on this path: a request that none does goes to
 * the router whatever its body, which answers 404 (no route has the path) or 405 (others' methods).
 * For a server whose every route is in `routes` (withRoutes); a route missing here still reads its
 * body, and a refused body fails that read with its 400.
 */
export const routableBy = (routes: ApiRoutes) => (method: string, url: string): boolean =>
  matchPath(routes, url).some(takes(method))
