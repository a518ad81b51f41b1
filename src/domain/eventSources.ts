/**
 * Event sources that read as the gateway's own (`audit`, `workspace`, `agent:<id>`), judged by
 * the store for every caller beside the contract's check (src/api/dtos.ts `isReservedEventSource`).
 * The contract's hand table is what the console and the typed client bundle; this one reads a
 * source through Unicode's whole confusables table (src/lib/skeleton.ts), the server's: Lisu
 * `ꓮudit`, Cherokee `ᎪUDIT` and `ᏔORKSPACE`, and `vv` for `w`. Readers trust the store's
 * `origin`, not the source; the refusal keeps a producer's event from even looking like the record.
 */
import { COLON_LIKE } from "../api/dtos.js"
import { asLetters, skeleton } from "../lib/skeleton.js"

/**
 * A source as a reader tells it apart: the skeleton, letters read as such, without marks (the
 * skeleton keeps a combining mark, so `ꓮ\u0301udit` and the table's `d` plus an overlay for `đ` read
 * apart from `audit`), colon look-alikes as `:`, no spaces, `i`/`l` and `vv`/`w` alike.
 */
const readAs = (source: string) =>
  asLetters(skeleton(asLetters(source.replace(COLON_LIKE, ":")))).normalize("NFD").replace(/[\p{M}\p{Z}\s]/gu, "").replace(COLON_LIKE, ":")
    .replace(/i/g, "l").replace(/vv/g, "w")

let reserved: { readonly names: ReadonlySet<string>; readonly agent: string } | undefined
// Made on first use: the skeleton loads the confusables table.
const reservedReadings = () => (reserved ??= { names: new Set(["audit", "workspace"].map(readAs)), agent: readAs("agent:") })

/** Why a producer may not write `source` (a 400 naming source), or undefined. */
export const eventSourceRefusal = (source: string): string | undefined => {
  const { names, agent } = reservedReadings()
  const read = readAs(source)
  return names.has(read) || read.startsWith(agent)
    ? `source: ${JSON.stringify(source)} reads as a source the gateway writes ("workspace", "audit", "agent:..."): written by the gateway only`
    : undefined
}
