/** Where a `file:` SVC_DATABASE_URL puts the SQLite database. */
import { resolve } from "node:path"

/**
 * The file path of a `file:` URL (`file:rel/path`, `file:/abs`, `file:///abs`). In-memory URLs
 * are refused: the store opens two connections (./libsql.ts) and a fresh in-memory connection is
 * an empty database.
 */
export const databasePathOf = (url: string): Either<string> => {
  if (!url.startsWith("file:")) {
    return { ok: false, message: `SVC_DATABASE_URL must be a file: or postgres:// URL, got "${url}"` }
  }
  let path = url.slice("file:".length).split("?", 1)[0]!
  if (path.startsWith("//")) {
    const slash = path.indexOf("/", 2)
    const host = slash === -1 ? path.slice(2) : path.slice(2, slash)
    if (host !== "" && host !== "localhost") return { ok: false, message: `SVC_DATABASE_URL: a file: URL cannot name host "${host}"` }
    path = slash === -1 ? "" : path.slice(slash)
  }
  path = decodeURIComponent(path)
  if (path === "" || path.includes(":memory:")) {
    return { ok: false, message: "SVC_DATABASE_URL must name a database file (in-memory databases do not keep data between connections)" }
  }
  return { ok: true, value: resolve(path) }
}

type Either<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly message: string }
