/**
 * JSON.parse read around V8's key bug for the whole process (src/api/jsonParse.ts says what the
 * bug is): the request bodies, JSON in strings and the embedded store's texts already go through
 * parseJson, but a process also parses what it did not write the call for: the workspace HTTP
 * client's answers (a gateway over a workspace service served `{"h":1,"\\":2}` for the stored
 * `{"h":1,"\"":2}` once it had read a backslash key), PostgreSQL's JSON columns, stored
 * idempotency results, the answers `svc` prints. Imported for its effect first thing by each
 * process's entry (src/main.ts, src/workspace/server/main.ts, src/cli/main.ts); a text that is
 * not a string goes to the engine's own parse.
 * A text with no backslash costs one `indexOf` more.
 */
import { parseJson } from "../api/jsonParse.js"

const native = JSON.parse
const FIXED = Symbol.for("tenant-gateway/jsonParseFix")

if ((native as unknown as Record<symbol, unknown>)[FIXED] !== true) {
  const parse = function parse(text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown): unknown {
    return typeof text === "string" ? parseJson(text, reviver) : native(text, reviver)
  }
  Object.defineProperty(parse, FIXED, { value: true })
  JSON.parse = parse as typeof JSON.parse
}
