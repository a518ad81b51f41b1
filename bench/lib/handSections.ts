/**
 * RESULTS.md's sections written by hand from the experiments (raw uploads, memory per cell):
 * each between `<!-- Name: ... by hand ... -->` and `<!-- /Name -->`. A full run rewrites the file
 * and keeps them, as it keeps S8's.
 */
const HAND_SECTION = /<!-- ([^:>]+):[^>]*by hand[^>]*-->[\s\S]*?<!-- \/\1 -->/g

/** The hand-written sections of `markdown`, in order. */
export const handSections = (markdown: string): Array<string> => [...markdown.matchAll(HAND_SECTION)].map((m) => m[0])

/** `markdown` with `sections` appended (those it already holds are left where they are). */
export const withHandSections = (markdown: string, sections: ReadonlyArray<string>): string =>
  sections.reduce((text, section) => (text.includes(section) ? text : `${text.trimEnd()}\n\n${section}\n`), markdown)
