/**
 * The warning for a misspelt SVC_* setting at start: an SVC_* variable in the environment (or
 * `.env`) that is none of the declared settings (./settings.ts) is reported with the closest
 * known name, and otherwise ignored.
 */
import { quoted } from "../lib/quoted.js"
import { SETTINGS } from "./settings.js"

/** Every SVC_* setting of this package (the gateway, `npm run workspace`, `svc`, `svc mcp`), sorted. */
export const KNOWN_SETTINGS: ReadonlyArray<string> = SETTINGS.map((s) => s.name).filter((n) => n.startsWith("SVC_")).sort()

const known = new Set(KNOWN_SETTINGS)

/** Edits (insert, delete, substitute a character) from `a` to `b`, ignoring case. */
const editDistance = (a: string, b: string): number => {
  const s = a.toLowerCase()
  const t = b.toLowerCase()
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j)
  for (let i = 1; i <= s.length; i++) {
    const current = [i]
    for (let j = 1; j <= t.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (s[i - 1] === t[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[t.length]!
}

/** The known name closest to `name` (fewest edits) and how far it is. */
export const closestSetting = (name: string): { readonly name: string; readonly distance: number } => {
  let best = { name: KNOWN_SETTINGS[0]!, distance: Number.POSITIVE_INFINITY }
  for (const candidate of KNOWN_SETTINGS) {
    const distance = editDistance(name, candidate)
    if (distance < best.distance) best = { name: candidate, distance }
  }
  return best
}

/**
 * A name as the warning shows it: bare when it is letters, digits and underscores of a sane
 * length, else quoted and clipped (an environment name may hold escapes, line breaks, anything),
 * every character outside printable ASCII escaped.
 */
const shownName = (name: string): string =>
  /^[A-Za-z0-9_]{1,64}$/.test(name)
    ? name
    // A setting's name is ASCII: any other letter is shown as its escape, so a look-alike
    // (`SVC_АDMIN_TOKEN`, a Cyrillic А) does not read as the name the hint then suggests (the
    // ellipsis is the clip's own).
    : quoted(name).replace(/[^\x20-\x7e…]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** Settings of the gateway without the SVC_ prefix, which SVC_PORT / SVC_HOST most likely mean. */
const UNPREFIXED = new Set(["PORT", "HOST"])

/**
 * One warning per SVC_* name in `env` that is not a setting, naming the closest one. The prefix is
 * matched in any case: the environment is case-sensitive, so `svc_tenant_slug` is ignored too.
 */
export const unknownSettingWarnings = (
  env: Record<string, string | undefined> = process.env,
  /** The process the warning speaks for. */
  of = "this gateway"
): Array<string> =>
  Object.keys(env)
    .filter((name) => name.toUpperCase().startsWith("SVC_") && !known.has(name))
    .sort()
    .map((name) => {
      const upper = name.toUpperCase()
      const bare = upper.slice("SVC_".length)
      let hint: string
      if (upper !== name && known.has(upper)) hint = `did you mean ${upper}? (names are case-sensitive)`
      else if (UNPREFIXED.has(bare)) hint = `did you mean ${bare}? (HOST and PORT have no SVC_ prefix)`
      else {
        const closest = closestSetting(upper)
        // A few edits away is a likely typo; farther, still the nearest name, said less surely.
        hint = closest.distance <= Math.max(2, Math.floor(name.length / 4))
          ? `did you mean ${closest.name}?`
          : `the closest is ${closest.name}; every setting is in .env.example`
      }
      return `${shownName(name)} is not a setting of ${of} and is ignored: ${hint}`
    })
