/**
 * Where decision links are served on the gateway's port: `/links/<token>` (README "Decision
 * links"). The token is a credential: logs and traces show the path with it replaced.
 */
export const LINK_PATH = "/links"

/**
 * The path as the router matches it: query, `;` and fragment cut off, percent-escapes decoded,
 * duplicate slashes as one, static segments in any case (`/LINKS/…`, `//links/…` and
 * `/%6Cinks/…` reach the link route too).
 */
const routedPath = (url: string): string => {
  const path = url.split(/[?;#]/, 1)[0]!
  let decoded = path
  try {
    decoded = decodeURIComponent(path)
  } catch {
    // A malformed escape: the router refuses it (a 400 the server logs too), but the path may
    // still spell a link with escapes (`/%6Cinks/<token>%zz`): its ASCII escapes are decoded, so
    // a token there is redacted all the same.
    decoded = path.replace(/%([0-7][0-9a-f])/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
  }
  return decoded.replace(/\/{2,}/g, "/").toLowerCase()
}

/** Whether a request path (or URL, query included) reaches a link page. */
export const isLinkPath = (url: string): boolean =>
  // Without an escape the answer is in the path's first characters: no copies for every request.
  url.includes("%") ? routedPath(url).startsWith(`${LINK_PATH}/`) : LINK_PREFIX.test(url)

/** routedPath(url) starts with `/links/`, for a url without `%`: slashes, `links` in any case, a slash. */
const LINK_PREFIX = /^\/+links\//i

/** The path as logs show it: a link's whole path is `/links/:token`, other paths unchanged. */
export const redactLinkPath = (path: string): string => (isLinkPath(path) ? `${LINK_PATH}/:token` : path)
