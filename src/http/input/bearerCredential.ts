/**
 * The credential of an `Authorization: Bearer <credential>` header (RFC 6750: the scheme in any
 * case, then one or more spaces; trailing spaces allowed). "" for `Bearer ` with nothing after
 * it; undefined when the header is absent or names another scheme. Each caller checks the
 * credential's syntax its own way (a JWT, an agent key, an admin or metrics token).
 */
const BEARER = /^Bearer +(\S*) *$/i

export const bearerCredential = (authorization: string | undefined): string | undefined =>
  authorization === undefined ? undefined : BEARER.exec(authorization)?.[1]
