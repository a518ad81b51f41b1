/**
 * Whether two JSON values are the same value: objects with the same members in any order (RFC
 * 8259: an object's members are unordered), arrays element by element, scalars by value. A
 * producer retrying an event with a serializer that orders keys otherwise sends the same event.
 */
export const sameJsonValue = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    return a.every((x, i) => sameJsonValue(x, b[i]))
  }
  const ka = Object.keys(a)
  const ob = b as Record<string, unknown>
  if (ka.length !== Object.keys(ob).length) return false
  const oa = a as Record<string, unknown>
  return ka.every((k) => Object.prototype.hasOwnProperty.call(ob, k) && sameJsonValue(oa[k], ob[k]))
}

/**
 * The value with every object's members in code-unit order of their names, arrays as they are:
 * one text for every spelling of the same value (an Idempotency-Key's fingerprint of an event).
 */
export const canonicalJsonValue = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(canonicalJsonValue)
    : v !== null && typeof v === "object"
    ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonicalJsonValue((v as Record<string, unknown>)[k])]))
    : v
