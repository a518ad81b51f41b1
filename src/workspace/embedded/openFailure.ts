/**
 * Why the workspace database did not open at start, in words an operator acts on, where the
 * driver's own are a code or its internals: libsql's `ConnectionFailed("...: 14")` (SQLITE_CANTOPEN)
 * for a path that is a directory or in a directory this user cannot write; the PostgreSQL
 * driver's "The server requested password authentication" (node-postgres before Effect 4: "client
 * password must be a string") for a URL without the password the server asks for, and "Connection
 * timed out" without the setting that bounds it; "The server does not support TLS" in the words
 * the README quotes.
 */
import { accessSync, constants, existsSync, statSync } from "node:fs"
import { dirname } from "node:path"

/** SQLite: the reason a database file did not open, from what is at `path`. */
export const describeSqliteOpenFailure = (path: string, message: string): string => {
  try {
    if (statSync(path).isDirectory()) return `it is a directory: SVC_DATABASE_URL must name a file (e.g. file:${path}/workspace.db)`
    accessSync(path, constants.R_OK | constants.W_OK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === "EACCES" || code === "EPERM") return `this user may not read and write it (${code}): change its owner or mode`
    if (code === "ENOENT" && existsSync(dirname(path))) {
      try {
        accessSync(dirname(path), constants.W_OK)
      } catch {
        return `cannot create it: this user may not write to ${dirname(path)} (SQLite also writes its -wal and -shm files there)`
      }
    }
  }
  // node-postgres's words, which the README quotes (the driver since Effect 4 says "TLS").
  if (message === "The server does not support TLS") return "The server does not support SSL connections"
  return message
}

/** PostgreSQL: the driver's reason, with what to change where it does not say. */
export const describePgOpenFailure = (message: string, connectTimeoutMs: number): string => {
  if (
    /client password must be a string|password authentication .*no password|no password supplied|requested password authentication|no password configured/i
      .test(message)
  ) {
    return "the server asks for a password and SVC_DATABASE_URL has none (postgres://user:password@host:5432/database; " +
      "percent-encode special characters)"
  }
  if ((/timeout|timed out/i.test(message) && /connect/i.test(message))) {
    return `${message}: no answer within SVC_DB_CONNECT_TIMEOUT_MS=${connectTimeoutMs} (is the host and port a PostgreSQL server, ` +
      "reachable from here?)"
  }
  // node-postgres's words, which the README quotes (the driver since Effect 4 says "TLS").
  if (message === "The server does not support TLS") return "The server does not support SSL connections"
  return message
}
