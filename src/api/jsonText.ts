/**
 * The JSON text of a value, made once per object: an ingested event's `data` is stringified by
 * the size check (src/services/dataIngest.ts) and again by the store that writes it; with the
 * text remembered here the second is a lookup (S5: 2 MB of strings and ~4 ms per 1,000-event
 * batch not made twice; bench/PROFILE.md). Keyed weakly by the object, so the text lives only
 * as long as the request's value; values are never mutated after decoding.
 */
const texts = new WeakMap<object, string>()

export const jsonText = (value: unknown): string => {
  if (typeof value !== "object" || value === null) return JSON.stringify(value ?? null)
  let text = texts.get(value)
  if (text === undefined) {
    text = JSON.stringify(value)
    texts.set(value, text)
  }
  return text
}
