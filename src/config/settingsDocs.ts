/**
 * `.env.example` and the README's settings tables, written from the declarations in
 * `./settings.ts` (`npm run settings:gen`; test/ops/settingNames.test.ts compares the committed
 * files with what this renders).
 */
import { SECTIONS, SETTINGS, type DocsTable, type SettingDeclaration, type SettingDocs } from "./settings.js"

const ENV_PREAMBLE = [
  "# Tenant gateway settings. Every one is optional; the defaults are shown.",
  "# Copy to .env in the directory the gateway starts in (for npm start: the checkout) and edit it:",
  "# it is read at start (Node's --env-file format), and the start-up log names it. A variable set",
  "# in the process environment wins over the file. Or set them all in the environment.",
  "# Written by `npm run settings:gen` from src/config/settings.ts: edit the declarations there."
]

const WIDTH = 100

/** `text` as `# ` comment lines of at most WIDTH characters (a longer word keeps its own line). */
const comment = (text: string): Array<string> => {
  const lines: Array<string> = []
  let line = "#"
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line !== "#" && line.length + 1 + word.length > WIDTH) {
      lines.push(line)
      line = "#"
    }
    line += ` ${word}`
  }
  if (line !== "#") lines.push(line)
  return lines
}

const shown = (value: SettingDeclaration["default"]): string => value === undefined ? "" : String(value)

export const renderEnvExample = (settings: ReadonlyArray<SettingDeclaration> = SETTINGS): string => {
  const out = [...ENV_PREAMBLE]
  for (const [key, title] of Object.entries(SECTIONS)) {
    const members = settings.filter((s) => s.section === key)
    if (members.length === 0) continue
    out.push("", `# --- ${title} `.padEnd(WIDTH - 4, "-"))
    for (const s of members) {
      if (s.envShared !== true) out.push(...comment(s.description))
      for (const value of s.example ?? [shown(s.default)]) out.push(`# ${s.name}=${value}`)
    }
  }
  return `${out.join("\n")}\n`
}

const docsOf = (s: SettingDeclaration): ReadonlyArray<SettingDocs> =>
  s.docs === undefined ? [] : "table" in s.docs ? [s.docs as SettingDocs] : (s.docs as ReadonlyArray<SettingDocs>)

/** One README table's rows: a setting with `with` joins the row of the one it names. */
export const renderTable = (table: DocsTable, settings: ReadonlyArray<SettingDeclaration> = SETTINGS): string => {
  const rows: Array<{ names: Array<string>; defaults: Array<string>; meaning: string }> = []
  const byLead = new Map<string, (typeof rows)[number]>()
  for (const s of settings) {
    for (const d of docsOf(s).filter((d) => d.table === table)) {
      if (d.with !== undefined) {
        const row = byLead.get(d.with)
        if (row === undefined) throw new Error(`${s.name}: its README row is that of ${d.with}, which has none in table ${table} above it`)
        row.names.push(s.name)
        row.defaults.push(d.default)
        continue
      }
      const row = { names: [s.name], defaults: [d.default], meaning: d.meaning ?? "" }
      byLead.set(s.name, row)
      rows.push(row)
    }
  }
  return [
    "| Setting | Default | Meaning |",
    "|---|---|---|",
    ...rows.map((r) => `| ${r.names.map((n) => `\`${n}\``).join(", ")} | ${cell(r.defaults.join(", "))} | ${cell(r.meaning)} |`)
  ].join("\n")
}

/** Text as one table cell: on one line, a bare `|` escaped. */
const cell = (text: string): string => text.replace(/\s+/g, " ").trim().replace(/(?<!\\)\|/g, "\\|")

const OPEN = (table: string) => `<!-- settings table ${table}: written by npm run settings:gen from src/config/settings.ts -->`
const CLOSE = "<!-- end of settings table -->"

/** The README with every marked settings table rewritten; a table the declarations use must be marked. */
export const renderReadme = (readme: string, settings: ReadonlyArray<SettingDeclaration> = SETTINGS): string => {
  const tables = [...new Set(settings.flatMap((s) => docsOf(s).map((d) => d.table)))]
  let out = readme
  for (const table of tables) {
    const start = out.indexOf(OPEN(table))
    const end = start === -1 ? -1 : out.indexOf(CLOSE, start)
    if (end === -1) throw new Error(`README.md has no settings table ${table} (between "${OPEN(table)}" and "${CLOSE}")`)
    out = `${out.slice(0, start)}${OPEN(table)}\n${renderTable(table, settings)}\n${out.slice(end)}`
  }
  return out
}
