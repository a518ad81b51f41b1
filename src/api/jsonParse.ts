/**
 * JSON.parse, with object keys written with an escape read right.
 *
 * V8 (Node 24's 13.6, and 14.6 still: a known V8 bug, not fixed upstream) resolves an escaped key through a map
 * transition an earlier parse made when the key's raw text starts with that transition's key: once
 * any JSON (any request's) had `{"h":[],"\\":0}`, `{"h":1,"\"":2}` parses with the key `\`, and
 * `"\t"` or `"\n"` in that place likewise. A body would be acknowledged and stored with another key
 * (and a number under it escape the inexact-number check, whose reviver then finds no source).
 * Here a text with an escaped key is parsed a second time with each such key replaced by a
 * placeholder without a backslash (which no transition can be mistaken for), and the objects that
 * hold one are rebuilt with the key decoded as a string value, which the bug does not touch.
 * Key order, duplicates (the last value, the first place) and `__proto__` as an own property stay
 * JSON.parse's. A text without a backslash, nearly every body, is parsed once as before.
 *
 * Pure (no Node modules).
 */

/**
 * The engine's own JSON.parse, taken when this module loads: a process may put parseJson in its
 * place (src/http/jsonParseFix.ts), and parseJson itself must call the engine's.
 */
const nativeParse: typeof JSON.parse = JSON.parse

type Reviver = (this: unknown, key: string, value: unknown, context?: { readonly source?: string }) => unknown

const BACKSLASH = 0x5c

const escapedAt = (text: string, quote: number): boolean => {
  let n = 0
  for (let i = quote - 1; i >= 0 && text.charCodeAt(i) === BACKSLASH; i--) n++
  return n % 2 === 1
}

/** Whether the string literal closing at `close` is an object's key (a colon follows it). */
const isKeyAt = (text: string, close: number): boolean => {
  let i = close + 1
  for (let c = text.charCodeAt(i); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; c = text.charCodeAt(++i));
  return text.charCodeAt(i) === 0x3a
}

const KEY_ICON = "\u{1F511}"

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39

/**
 * A prefix the text does not hold, so no key of its own starts with it (no randomness: this also
 * runs in browsers, where crypto.randomUUID needs a secure context): `🔑:`, else `🔑<n>:` with an
 * n that no `🔑` of the text is followed by (then a colon). Found in one pass: making the prefix an
 * icon longer per look at the whole text was quadratic in a run of icons (a 200 KB string value
 * of them beside one backslash held the event loop 15 s), and the prefix as long as the run.
 */
const markerFor = (text: string): string => {
  const plain = `${KEY_ICON}:`
  if (!text.includes(plain)) return plain
  const taken = new Set<number>()
  for (let i = text.indexOf(KEY_ICON); i !== -1; i = text.indexOf(KEY_ICON, i + KEY_ICON.length)) {
    let end = i + KEY_ICON.length
    while (isDigit(text.charCodeAt(end))) end++
    // More digits than there are icons in any string cannot be the n chosen below.
    const digits = end - i - KEY_ICON.length
    if (digits > 0 && digits <= 10 && text.charCodeAt(end) === 0x3a) taken.add(Number(text.slice(i + KEY_ICON.length, end)))
  }
  let n = 0
  while (taken.has(n)) n++
  return `${KEY_ICON}${n}:`
}

/** `text` (JSON; any other text gives a text JSON.parse refuses too) with every key that has an escape made `"<marker><n>"`, and those keys decoded; undefined when none has one. */
const withPlaceholderKeys = (text: string): { readonly text: string; readonly marker: string; readonly keys: ReadonlyArray<string> } | undefined => {
  if (text.indexOf("\\") === -1) return undefined
  // Looked for only once a key with an escape is found: most texts with a backslash hold it in a
  // value, and the look is a pass over the whole text.
  let marker: string | undefined
  const markerOf = () => (marker ??= markerFor(text))
  const keys: Array<string> = []
  const writtenAs = new Map<string, string>()
  // Every key given a placeholder, decoded: never cleared (a key's placeholder must be one).
  const placeholderOf = new Map<string, number>()
  let out = ""
  let from = 0
  // From backslash to backslash: only a literal that holds one can be a key written with an
  // escape, and in JSON a backslash stands only inside a literal. Walking every literal up to the
  // last backslash cost a 1 MB text with `\n` in its values 35% more than its parse.
  for (let slash = text.indexOf("\\"); slash !== -1; ) {
    // Its literal's close: the next quote after it that no backslash escapes.
    let close = text.indexOf('"', slash + 1)
    while (close !== -1 && escapedAt(text, close)) close = text.indexOf('"', close + 1)
    if (close === -1) break
    // Its open: the last quote before it that no backslash escapes (none stands inside a literal).
    let open = text.lastIndexOf('"', slash)
    while (open !== -1 && escapedAt(text, open)) open = text.lastIndexOf('"', open - 1)
    slash = text.indexOf("\\", close + 1)
    // Not a literal of its own (text that is no JSON: JSON.parse refuses it, below or after).
    if (open < from) continue
    if (isKeyAt(text, close)) {
      // A string value's decode: no property key is made, so no transition is consulted.
      const literal = text.slice(open, close + 1)
      let written = writtenAs.get(literal)
      if (written === undefined) {
        const key = nativeParse(literal) as string
        if (!NEEDS_ESCAPE.test(key) && !(key.startsWith(KEY_ICON) && key.startsWith(markerOf()))) {
          // A key that can be written without an escape (`\u0061`, `\u0031`, `\/`) is written
          // so: it is the same key, and JSON.parse places it, duplicates and order included (an
          // integer key, `1`, comes before the others, so a rebuild in key order had given
          // {"\u0031":"first","1":"last"} the first value).
          written = `"${key}"`
        } else {
          // One placeholder per key, however often and however spelt: a placeholder per occurrence
          // gave every object keys of its own (a 32 MB array of {"\"":1} parsed 10 times slower
          // than the text itself), and one per spelling made two spellings of one key (`\t`,
          // `\u0009`) two keys, the rebuild keeping the later-placed one's value instead of the
          // last written ({"\t":0,"\u0009":"","\t":"x"} gave ""). No placeholder is an integer, so
          // an object's keys stay in the text's order.
          let id = placeholderOf.get(key)
          if (id === undefined) {
            id = keys.push(key) - 1
            placeholderOf.set(key, id)
          }
          written = `"${markerOf()}${id}"`
        }
        // Kept small: a body of a million different keys gains nothing from it and paid 1 us a key.
        if (writtenAs.size === 4096) writtenAs.clear()
        writtenAs.set(literal, written)
      }
      out += text.slice(from, open) + written
      from = close + 1
    }
  }
  // Keys only written without their escapes are still this text's to give, not the original's.
  // No marker was needed when no key took a placeholder (`keys` empty: nothing to rename).
  return from === 0 ? undefined : { text: out + text.slice(from), marker: marker ?? "", keys }
}

/** What a key must escape to be written in JSON: a quote, a backslash, a control character. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/

const define = (target: object, key: string, value: unknown) =>
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })

/**
 * `root` with every object that has a placeholder key rebuilt with the keys decoded (no recursion:
 * any depth). Only objects and arrays are visited, arrays by index: a tuple per value, numbers
 * included, made the walk 12 times the parse (an escaped key beside an array of 4,000,000 numbers).
 */
const renamed = (root: unknown, marker: string, keys: ReadonlyArray<string>): unknown => {
  const hasPlaceholder = (o: object): boolean => {
    for (const k in o) if (k.startsWith(marker)) return true
    return false
  }
  const rebuild = (o: Record<string, unknown>) => {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(o)) {
      const key = k.startsWith(marker) ? keys[Number(k.slice(marker.length))]! : k
      // An assignment but for `__proto__`, which would set the prototype instead.
      if (key === "__proto__") define(out, key, o[k])
      else out[key] = o[k]
    }
    return out
  }
  const visited = (v: object): object => (!Array.isArray(v) && hasPlaceholder(v) ? rebuild(v as Record<string, unknown>) : v)
  if (root === null || typeof root !== "object") return root
  const result = visited(root)
  const stack: Array<object> = [result]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const v: unknown = node[i]
        if (v === null || typeof v !== "object") continue
        const w = visited(v)
        if (w !== v) node[i] = w
        stack.push(w)
      }
    } else {
      const o = node as Record<string, unknown>
      for (const k of Object.keys(o)) {
        const v = o[k]
        if (v === null || typeof v !== "object") continue
        const w = visited(v)
        if (w !== v) define(o, k, w)
        stack.push(w)
      }
    }
  }
  return result
}

/** JSON.parse(text, reviver), keys with escapes read as written (see above). Throws as JSON.parse does. */
export const parseJson = (text: string, reviver?: Reviver): unknown => {
  const parse = (t: string): unknown => (reviver === undefined ? nativeParse(t) : nativeParse(t, reviver as never))
  let placeheld: ReturnType<typeof withPlaceholderKeys>
  let value: unknown
  try {
    placeheld = withPlaceholderKeys(text)
    if (placeheld !== undefined) value = parse(placeheld.text)
  } catch {
    // Not JSON (a key that does not decode, say): JSON.parse's own error, message and position.
    return parse(text)
  }
  if (placeheld === undefined) return parse(text)
  return placeheld.keys.length === 0 ? value : renamed(value, placeheld.marker, placeheld.keys)
}
