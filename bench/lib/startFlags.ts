import { readFileSync } from "node:fs"
import { join } from "node:path"

/** The node flags `npm start` runs dist/main.js with (package.json: `... && exec node <flags> dist/main.js`). */
export const startFlags = (root: string): Array<string> => {
  const script = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.start ?? ""
  const m = /exec node (.*?)\s*dist\/main\.js/.exec(script)
  return m === null || m[1]!.trim() === "" ? [] : m[1]!.trim().split(/\s+/)
}
