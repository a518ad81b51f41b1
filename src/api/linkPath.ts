/**
 * Where decision links are served on the gateway's port: `/links/<token>` (README "Decision
 * links"). The token is a credential: logs and traces show the path with it replaced.
 */
export const LINK_PATH = "/links"

/**
 * The path as the router matches it: an absolute-form target (`http://host/…`) read as the
 * server reads it (its path, dot segments resolved), a first character that is not `/` taken as
 * one (the router skips it: `*links/…` reaches the link route), query, `;` and fragment cut off,
 * percent-escapes decoded, duplicate slashes as one, static segments in any case (`/LINKS/…`,
 * `//links/…`, `/%6Cinks/…` and the Kelvin sign's `/lin%E2%84%AAs/…` reach the link route too).
 */
export const routedPath = (url: string): string => {
  let target = absoluteFormPath(url)
  if (target.charCodeAt(0) !== 47) target = "/" + target.slice(1)
  const path = target.split(/[?;#]/, 1)[0]!
  let decoded = path
  try {
    decoded = decodeURIComponent(path)
  } catch {
    // A malformed escape: the router refuses it (a 400 the server logs too), but the path may
    // still spell a link with escapes (`/%6Cinks/<token>%zz`): each run of escapes that decodes
    // is decoded, so a token there is redacted all the same.
    decoded = decodedEscapeRuns(path)
  }
  return decoded.replace(/\/{2,}/g, "/").toLowerCase()
}

/** An absolute-form request target, as the Node adapter recognises one. */
const ABSOLUTE_FORM = /^https?:\/\//i

/**
 * A request target as the application reads it: an absolute-form one (`http://host/…`) is its
 * path and query (dot segments resolved), as the Node adapter makes it; any other as it is.
 */
export const absoluteFormPath = (url: string): string => {
  if (!ABSOLUTE_FORM.test(url)) return url
  try {
    const parsed = new URL(url)
    return parsed.pathname + parsed.search
  } catch {
    return url.replace(/^https?:\/\/[^/]*/i, "")
  }
}

/** Whether a request path (or URL, query included) reaches a link page. */
export const isLinkPath = (url: string): boolean =>
  // A path starting with `/` and without an escape: the answer is in its first characters, no
  // copies for every request.
  url.charCodeAt(0) === 47 && !url.includes("%") ? LINK_PREFIX.test(url) : routedPath(url).startsWith(`${LINK_PATH}/`)

/** routedPath(url) starts with `/links/`, for a url without `%`: slashes, `links` in any case, a slash. */
const LINK_PREFIX = /^\/+links\//i

/**
 * The path as logs show it: a link's whole path is `/links/:token`, and so is any path with a
 * `links` segment followed by more, in any spelling, that the router does not serve as a link
 * (`/./links/<token>`, `/x/../links/…`, `/%2e/links/…`, `/links;x/…`, `/links\…`): a 404 for it
 * still carries a token that opens the link's page. Other paths unchanged.
 */
export const redactLinkPath = (path: string): string => (namesLink(path) ? `${LINK_PATH}/:token` : path)

/** Whether a path may carry a link's token: a link path, or one naming a `links` segment (redactLinkPath). */
export const namesLink = (path: string): boolean =>
  isLinkPath(path) || (LINK_WORD.test(path) && LINK_SEGMENT.test(decodedEscapeRuns(path).toLowerCase()))

/** Could spell `links` (a cheap test before any copy): the word in any case, the Kelvin sign, or an escape. */
const LINK_WORD = /lin(?:k|\u212a)s|%/i

/** A `links` segment followed by more, in a decoded, lower-cased path. */
const LINK_SEGMENT = /(?:^|[/\\])links[/\\;]./

/** Each run of percent-escapes that decodes, decoded (a malformed one left as it is). */
const decodedEscapeRuns = (path: string): string =>
  path.includes("%")
    ? path.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
      try {
        return decodeURIComponent(run)
      } catch {
        return run
      }
    })
    : path
