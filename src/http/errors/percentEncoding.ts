/**
 * Percent-escapes in a request path or query: finding the ones the router cannot decode (used
 * by the Node server for path and query, and by the error path for servers without it), and
 * decoding without throwing.
 */

/**
 * The first malformed percent-escape in a path or query (`%` not followed by two hex digits, or
 * escaped bytes that are not UTF-8, e.g. an encoded surrogate), or undefined. The router cannot
 * decode such a path and finds no route; a query would be decoded leniently (bytes replaced).
 */
export const malformedPercentEncoding = (path: string): string | undefined => {
  const bare = /%(?![0-9a-fA-F]{2})/.exec(path)
  const runs = path.matchAll(/(?:%[0-9a-fA-F]{2})+/g)
  for (const run of runs) {
    if (bare !== null && bare.index < run.index) break
    try {
      decodeURIComponent(run[0])
    } catch {
      return run[0].length > 24 ? `${run[0].slice(0, 24)}…` : run[0]
    }
  }
  return bare === null ? undefined : path.slice(bare.index, bare.index + 3)
}

/** `s` percent-decoded, or undefined when it holds an escape that is not UTF-8. */
export const safeDecode = (s: string): string | undefined => {
  try {
    return decodeURIComponent(s)
  } catch {
    return undefined
  }
}
