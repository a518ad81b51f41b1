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
 * Paths are matched the way the router (find-my-way) matches them: query (`?`, `;`, `#`)
 * cut off, duplicate and trailing slashes ignored, static segments case-insensitive.
 */
import { safeDecode } from "./percentEncoding.js"
import { MAX_PATH_PARAM_LENGTH } from "../server/ServerLimits.js"

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
}

/** A template the request path matched, with its decoded path parameters. */
export interface PathMatch {
  readonly method: string
  readonly path: string
  readonly params: ReadonlyArray<readonly [name: string, value: string]>
}

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
  for (const group of Object.values(api.groups)) {
    for (const endpoint of Object.values(group.endpoints)) {
      result.push({ method: endpoint.method, path: endpoint.path, segments: compileSegments(endpoint.path) })
    }
  }
  templates.set(api, result)
  return result
}


/** The path of a request URL as the router sees it, split into its (still encoded) segments. */
const splitPath = (url: string): Array<string> => {
  // An absolute-form request target (`GET http://host/path`): the router drops the origin too.
  let path = url.replace(/^https?:\/\/[^/]*/i, "")
  // The router takes any first character as `/` (`*v1/gl` is `/v1/gl`: ../server/nodeServer.ts normalisedRouterPath).
  if (path.length > 0 && path.charCodeAt(0) !== 47) path = "/" + path.slice(1)
  const end = path.search(/[?;#]/)
  if (end !== -1) path = path.slice(0, end)
  return path.split("/").filter((part) => part !== "")
}

const matchTemplate = (template: Template, parts: ReadonlyArray<string>): PathMatch | undefined => {
  const params: Array<readonly [string, string]> = []
  const segments = template.segments
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!
    const part = parts[i]
    if (segment._tag === "Wildcard") {
      params.push(["*", safeDecode(parts.slice(i).join("/")) ?? parts.slice(i).join("/")])
      return { method: template.method, path: template.path, params }
    }
    if (part === undefined) {
      return segment._tag === "Param" && segment.optional && i === segments.length - 1
        ? { method: template.method, path: template.path, params }
        : undefined
    }
    const decoded = safeDecode(part) ?? part
    if (segment._tag === "Static") {
      if (decoded.toLowerCase() !== segment.value) return undefined
    } else {
      params.push([segment.name, decoded])
    }
  }
  return parts.length === segments.length ? { method: template.method, path: template.path, params } : undefined
}

/** The API's endpoints whose path template matches the request URL (any method). */
export const matchPath = (api: ApiRoutes, url: string): ReadonlyArray<PathMatch> => {
  const parts = splitPath(url)
  const matches: Array<PathMatch> = []
  for (const template of templatesOf(api)) {
    const match = matchTemplate(template, parts)
    if (match !== undefined) matches.push(match)
  }
  return matches
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
  const wanted = method.toUpperCase() === "HEAD" ? "GET" : method.toUpperCase()
  const same = matches.filter((m) => m.method.toUpperCase() === wanted)
  if (same.length === 0) return { _tag: "MethodNotAllowed", allow }
  for (const match of same) {
    for (const [name, value] of match.params) {
      if (value.length > maxParamLength) return { _tag: "ParamTooLong", name, length: value.length }
    }
  }
  return { _tag: "NotFound" }
}

/**
 * Whether a request may reach a route of `api` by its method: false only where endpoints have
 * the path but not the method (the router's 405 then answers, whatever the body); paths the API
 * does not have at all are true (routes beside it, such as /mcp, read their bodies).
 */
export const methodRoutedBy = (api: ApiRoutes) => (method: string, url: string): boolean =>
  explainUnrouted(api, method, url, MAX_PATH_PARAM_LENGTH)._tag !== "MethodNotAllowed"
