/**
 * Text as a reader tells it apart: UTS #39's skeleton after case and compatibility folding, pure.
 * Look-alikes meet (`аpprove` and `approve`, `rn` and `m`, `0` and `O`), so it is for refusals:
 * a comparison that errs towards "the same". Four-eyes compares people by it
 * (src/domain/actorSkeleton.ts), and a write's signal names are refused by it when they read as
 * a step signal of another route (src/domain/signalNames.ts).
 */
import { createRequire } from "node:module"

// The confusables table (a 6,000-key object and one regular expression of all its keys) is
// loaded by the first skeleton, not at start: a gateway that never compares two people or a
// signal name keeps it out of memory (bench/RESULTS.md, memory per cell). `require` stays a call
// at run time in the bundle, resolved from node_modules like the native driver.
const requireLazily = createRequire(import.meta.url)
let confusables: ((s: string) => string) | undefined
const unhomoglyph = (s: string): string =>
  (confusables ??= requireLazily("unhomoglyph") as (s: string) => string)(s)

/**
 * The confusables table alone, on the text as written (NFKC, case kept): capitals of other
 * scripts read as the Latin capitals they are drawn as (Greek `Κ`, Cyrillic `К` as `K`), which
 * `skeleton`'s case folding first would make small letters the table reads otherwise (`κ` as `ĸ`).
 */
export const confusablesAsWritten = (text: string): string =>
  // The dot e-mail domains read, here too: the table reads `。` as `˳`.
  unhomoglyph(text.normalize("NFKC").replace(IDEOGRAPHIC_FULL_STOP, "."))

// Step 4: default-ignorable, format and control characters, and the Braille blank.
const IGNORED = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}\u2800]/gu

// Step 4: a dot above where the letter's own dot already is; the dot e-mail domains also read.
const SOFT_DOTTED_DOT = /(\p{Soft_Dotted})\u0307/gu
const IDEOGRAPHIC_FULL_STOP = /\u3002/g

// Cherokee folds to its capitals (Unicode's CaseFolding.txt, for stability): lower case makes
// small letters that the confusables table does not know (`ᏔORKSPACE` would not read as `workspace`).
const CHEROKEE_SMALL = /[\uab70-\uabbf\u13f8-\u13fd]/g

/**
 * NFKC and case folding: `toUpperCase()` then `toLowerCase()` (so `ẞ`, `ß` and `SS` meet as `ss`),
 * Cherokee to its capitals.
 */
export const foldCase = (text: string): string =>
  text.normalize("NFKC").toUpperCase().toLowerCase().replace(CHEROKEE_SMALL, (c) => c.toUpperCase())

/**
 * Exactly, in this order:
 *   1. NFKC (compatibility forms: full-width `ａ`, ligatures, a decomposed `ä` composed);
 *   2. case folding: `toUpperCase()` then `toLowerCase()`;
 *   3. NFD;
 *   4. every Default_Ignorable_Code_Point (zero-width characters, joiners, variation selectors,
 *      the combining grapheme joiner, Hangul fillers, soft hyphen), every other format (Cf),
 *      control (Cc) character, and the blank-looking U+2800 BRAILLE PATTERN BLANK removed; a
 *      combining dot above on a letter that has its dot already (Soft_Dotted: `i̇` is drawn as
 *      `i`) removed; and the ideographic full stop `。` (what NFKC makes of `｡`), which e-mail
 *      domains read as a dot (IDNA), made a `.`;
 *   5. every character of Unicode's confusables table (UTS #39, `confusables.txt`, through the
 *      `unhomoglyph` package's copy of it) replaced by its prototype (Cyrillic `а` → `a`, `rn` and
 *      `m` meet, `0`/`O`, `1`/`l`/`I`);
 *   6. NFD again, then lower case again (a prototype may be a capital).
 */
export const skeleton = (text: string): string =>
  unhomoglyph(
    foldCase(text).normalize("NFD").replace(IGNORED, "").replace(SOFT_DOTTED_DOT, "$1").replace(IDEOGRAPHIC_FULL_STOP, ".")
  ).normalize("NFD").toLowerCase()

// Letters the confusables table leaves alone or makes (Cyrillic `т` and Greek `τ` become `ᴛ`, a
// Cherokee capital folds to a small letter the table makes a small capital): small capitals, and
// the dotless `ı` and `ȷ`, read as the letters they are.
const AS_LETTERS: Readonly<Record<string, string>> = {
  ...Object.fromEntries([..."ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘꞯʀꜱᴛᴜᴠᴡʏᴢ"].map((c, i) => [c, "abcdefghijklmnopqrstuvwyz"[i]!])),
  "ı": "i",
  "ȷ": "j"
}
const AS_LETTER = new RegExp(`[${Object.keys(AS_LETTERS).join("")}]`, "gu")

/** Small capitals and the dotless `ı` and `ȷ` as the letters they are (before and after `skeleton`). */
export const asLetters = (text: string): string => text.replace(AS_LETTER, (c) => AS_LETTERS[c] ?? c)
