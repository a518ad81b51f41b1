/**
 * Where decision links are served on the gateway's port: `/links/<token>` (README "Decision
 * links"). The token is a credential: logs and traces show the path with it replaced.
 */
export const LINK_PATH = "/links"

const LINK_TOKEN = /^\/links\/[^/?#]*/

/** Whether a request path (or URL, query included) is a link page's. */
export const isLinkPath = (url: string): boolean => url.startsWith(`${LINK_PATH}/`)

/** The path as logs show it: a link's token replaced by `:token`, other paths unchanged. */
export const redactLinkPath = (path: string): string =>
  isLinkPath(path) ? path.replace(LINK_TOKEN, `${LINK_PATH}/:token`) : path
