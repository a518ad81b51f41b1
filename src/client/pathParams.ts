/**
 * Path parameters as they go on the wire. A value holding `/`, `?`, `#` or `%` spliced in
 * verbatim could change the route (a composite task id `<uuid>:s:x/../<other-uuid>` would
 * address the other task once the URL is normalised). Effect 4's HttpApiClient encodes each
 * parameter itself; the URLs we build by hand (the download helper, the console's event stream,
 * the workspace's HTTP client) encode through here; the servers' routers decode.
 */

/**
 * One path segment: percent-encoded, `:` kept as is (legal in a segment, and the typed client
 * checks the contract's TaskId pattern on the value it is given, which needs the colons).
 */
export const encodePathSegment = (value: string): string => encodeURIComponent(value).replace(/%3A/g, ":")

/** Every value of a path-parameter record encoded as one segment. */
export const encodePathParams = <P extends Record<string, string>>(params: P): P =>
  Object.fromEntries(Object.entries(params).map(([k, v]) => [k, typeof v === "string" ? encodePathSegment(v) : v])) as P

/**
 * `.` and `..` cannot be sent as a segment at all: URL parsers (browsers, undici) remove them
 * and their encoded forms (`%2e`) with the segment before. The name of such a parameter, if any.
 */
export const dotSegmentParam = (params: Record<string, unknown>): string | undefined =>
  Object.entries(params).find(([, v]) => v === "." || v === "..")?.[0]
