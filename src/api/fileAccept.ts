/**
 * Which files a FILE_UPLOAD step admits: its `displayHint.config.accept`, read as the HTML
 * `accept` attribute is (`.ext`, `type/*`, `type/subtype`; an array or a comma list). Pure and
 * free of Node imports: the console (built for the browser) and the gateway (before a file signal
 * is stored) decide with this one function, so they agree.
 */

/** The step's accepted entries, trimmed; none (every file admitted) when the config names none. */
export const acceptedTypes = (config: Readonly<Record<string, unknown>> | undefined): ReadonlyArray<string> => {
  const accept = config?.accept
  const entries = Array.isArray(accept)
    ? accept.filter((a): a is string => typeof a === "string")
    : typeof accept === "string"
    ? accept.split(",")
    : []
  return entries.map((a) => a.trim()).filter((a) => a !== "")
}

/** `type/subtype` of a media type, lower case, without parameters ("" for none). */
const essence = (mediaType: string | undefined): string => (mediaType ?? "").split(";", 1)[0]!.trim().toLowerCase()

/**
 * Whether a file (its name, and its media type when known: "" or undefined for unknown) is
 * admitted by `accepted`. Case-insensitive; a type's parameters (`; charset=utf-8`) are ignored;
 * `*` and `*\/*` admit everything.
 */
export const isAccepted = (file: { readonly name: string; readonly type?: string | undefined }, accepted: ReadonlyArray<string>): boolean => {
  if (accepted.length === 0) return true
  const name = file.name.toLowerCase()
  const type = essence(file.type)
  return accepted.some((entry) => {
    const a = entry.trim().toLowerCase()
    if (a === "*" || a === "*/*") return true
    if (a.startsWith(".")) return name.endsWith(a)
    if (type === "") return false
    if (a.endsWith("/*")) return type.startsWith(a.slice(0, -1))
    return type === essence(a)
  })
}
