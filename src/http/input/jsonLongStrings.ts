/**
 * JSON.parse of a large ASCII body without turning all of it into one string first. A base64
 * upload is one long string literal in a small object: the whole-body text (a 40 MiB copy) and
 * JSON.parse's own copy of the literal were two steps of 30-40 ms each alone, 70-190 ms under
 * load (bench S8), and 80 MiB per upload. Here the long literals are cut out of the text that
 * JSON.parse sees (each replaced by a marker unique to this call) and made strings straight
 * from the bytes, then put back in their place by the parse's reviver.
 *
 * The result is JSON.parse's on the whole body, or undefined (the caller parses the whole body
 * then, so every error is the parser's own): a literal is cut only when its bytes hold no
 * backslash (no escapes: its bytes are its characters) and no control character (which JSON
 * forbids raw), and when it is a value, not a key. Quotes delimit string literals exactly as
 * JSON's lexer sees them (a quote preceded by an odd run of backslashes is inside a string), and
 * what is cut holds no quote, so the text around the cuts lexes as it did in the whole body.
 */
import { randomUUID } from "node:crypto"
import type { KeptLiteral } from "./base64Literals.js"
import { parseJson } from "../../api/jsonParse.js"
import { closingQuote, isKeyAt } from "../../api/jsonScan.js"

const QUOTE = 0x22
const BACKSLASH = 0x5c

/** String literals looked at for long ones, from the start of the body: an upload has a few. */
const MAX_LITERALS = 256

const CONTROL = /[\u0000-\u001f]/

/** The content ranges [start, end) of the long, plain string values among the body's first literals. */
const longLiterals = (bytes: Buffer, minLength: number): Array<readonly [number, number]> => {
  const found: Array<readonly [number, number]> = []
  let at = 0
  for (let seen = 0; seen < MAX_LITERALS; seen++) {
    const open = bytes.indexOf(QUOTE, at)
    if (open === -1) break
    const close = closingQuote(bytes, open)
    if (close === -1) break
    if (close - open - 1 >= minLength) {
      const backslash = bytes.indexOf(BACKSLASH, open + 1)
      if ((backslash === -1 || backslash > close) && !isKeyAt(bytes, close)) found.push([open + 1, close])
    }
    at = close + 1
  }
  return found
}

/**
 * Node makes a Latin-1 string of more than about 1 MB (its EXTERN_APEX) an external string, and
 * on Node 24 (V8 13) the bytes of external strings count towards the old generation's
 * allocation limit while the heap itself stays small: with each upload's literal external, S3
 * ran a mark-compact every 3-4 uploads (82 in 311; 26 ms of CPU per upload). Made of pieces
 * under that size, joined (one copy when first read, here by the CONTROL test), the literal is
 * an ordinary heap string: 14 mark-compacts in 317 uploads, 17 ms (bench/PROFILE.md, Effect 4).
 */
const PIECE = 512 * 1024
const onHeapLatin1 = (bytes: Buffer, start: number, end: number): string => {
  let s = ""
  for (let i = start; i < end; i += PIECE) s += bytes.toString("latin1", i, Math.min(end, i + PIECE))
  return s
}

/** The value at `path` of a parsed JSON value (through objects only), or undefined. */
const at = (value: unknown, path: ReadonlyArray<string>): unknown => {
  let here = value
  for (const key of path) {
    if (typeof here !== "object" || here === null || Array.isArray(here) || !Object.hasOwn(here, key)) return undefined
    here = (here as Record<string, unknown>)[key]
  }
  return here
}

/**
 * `JSON.parse` of `bytes` (ASCII, or UTF-8: `encoding`) with its string values of at least `minLength` characters made
 * from the bytes directly; undefined when it has none, or when the whole body must be parsed.
 *
 * A long literal that is the whole value at one of the `keep` paths (object keys from the root)
 * is not made a string at all: its placeholder stays in the value and the literal comes back in
 * `kept` ([start, end) of `bytes`), to be decoded from the bytes (./base64Literals.ts). Its bytes
 * hold no quote and no backslash; a raw control character in them is for the caller to find.
 */
export const parseWithLongStrings = (
  bytes: Buffer,
  minLength: number,
  keep: ReadonlyArray<ReadonlyArray<string>> = [],
  /**
   * How the bytes are text: ASCII (`latin1`, each byte a character) or valid UTF-8 (`utf8`;
   * quotes and backslashes are single bytes there too, never inside another character).
   */
  encoding: "latin1" | "utf8" = "latin1"
): { readonly value: unknown; readonly kept: ReadonlyArray<KeptLiteral> } | undefined => {
  const cuts = longLiterals(bytes, minLength)
  if (cuts.length === 0) return undefined
  const marker = randomUUID()
  let text = ""
  let from = 0
  cuts.forEach(([start, end], i) => {
    text += bytes.toString(encoding, from, start) + marker + i
    from = end
  })
  text += bytes.toString(encoding, from, bytes.length)
  const indexOf = (value: unknown): number | undefined => {
    if (typeof value !== "string" || !value.startsWith(marker) || value.length > marker.length + 3) return undefined
    const i = Number(value.slice(marker.length))
    return Number.isInteger(i) && i < cuts.length && marker + i === value ? i : undefined
  }
  // Which literals stay bytes: read off the value parsed with every placeholder in place.
  const kept = new Map<number, KeptLiteral>()
  if (keep.length > 0) {
    let value: unknown
    try {
      value = parseJson(text)
    } catch {
      return undefined
    }
    for (const path of keep) {
      const placeholder = at(value, path)
      const i = indexOf(placeholder)
      if (i !== undefined) kept.set(i, { placeholder: placeholder as string, start: cuts[i]![0], end: cuts[i]![1] })
    }
    if (kept.size === cuts.length) return { value, kept: [...kept.values()].sort((a, b) => a.start - b.start) }
  }
  const strings: Array<string | undefined> = []
  for (let i = 0; i < cuts.length; i++) {
    if (kept.has(i)) continue
    const s = encoding === "latin1" ? onHeapLatin1(bytes, cuts[i]![0], cuts[i]![1]) : bytes.toString("utf8", cuts[i]![0], cuts[i]![1])
    if (CONTROL.test(s)) return undefined
    strings[i] = s
  }
  try {
    return {
      // Keys with escapes read as written (../../api/jsonParse.ts).
      value: parseJson(text, (_key, value) => {
        const i = indexOf(value)
        return i === undefined ? value : strings[i] ?? value
      }),
      kept: [...kept.values()].sort((a, b) => a.start - b.start)
    }
  } catch {
    return undefined
  }
}

/**
 * The body's text with every string value of at least `minLength` bytes made `""`: what a second
 * parse needs that only looks at the body's keys and numbers (where its inexact number is,
 * ../../api/jsonNumbers.ts). Decoding and parsing the whole body again for that held the event
 * loop for seconds on a large upload (480 MB: 3 s, against 0.27 s for the same body without the
 * number); the strings' bytes are skipped by their quotes. `bytes` is a body JSON.parse accepted,
 * valid UTF-8: a cut at a quote never splits a character.
 */
export const textWithoutLongStrings = (bytes: Buffer, minLength: number): string => {
  // A byte order mark (which the body's own parse dropped) is not text.
  const first = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
  let text = ""
  let from = first
  let at = first
  for (;;) {
    const open = bytes.indexOf(QUOTE, at)
    if (open === -1) break
    const close = closingQuote(bytes, open)
    if (close === -1) break
    if (close - open - 1 >= minLength && !isKeyAt(bytes, close)) {
      text += bytes.toString("utf8", from, open + 1)
      from = close
    }
    at = close + 1
  }
  return text + bytes.toString("utf8", from, bytes.length)
}
