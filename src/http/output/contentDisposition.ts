/**
 * `Content-Disposition: attachment` per RFC 6266: a quoted ASCII `filename` for every client,
 * plus `filename*` (RFC 8187, UTF-8) when the name is not plain ASCII.
 */
import { neutraliseInvisible } from "../../api/headerValues.js"

const ATTR_CHAR = /[A-Za-z0-9!#$&+\-.^_`|~]/

const encodeRfc8187 = (s: string): string =>
  Array.from(new TextEncoder().encode(s), (b) => {
    const c = String.fromCharCode(b)
    return b < 0x80 && ATTR_CHAR.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`
  }).join("")

export const attachment = (filename: string): string => {
  // Control characters, path separators and invisible format characters (a name stored before
  // they were refused) never belong in a header or a saved name.
  const clean = neutraliseInvisible(filename).replace(/[\u0000-\u001f\u007f/\\]/g, "_")
  const ascii = clean.replace(/[^\x20-\x7e]/g, "_").replace(/["]/g, "'")
  return clean === ascii
    ? `attachment; filename="${ascii}"`
    : `attachment; filename="${ascii}"; filename*=UTF-8''${encodeRfc8187(clean)}`
}
