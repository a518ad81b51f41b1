/**
 * The arguments as @effect/cli wants them: the command path first, then everything else. The
 * global options (--url, --admin-url, --actor, --actor-header, --json) may also stand before the command or between its
 * words (`svc --json tasks list <id>`); they are moved after the command path. Also tells
 * whether help (-h, --help) or the version (--version, before any command) was asked for.
 * Nothing after `--` is looked at.
 */
import { commandTree } from "./help.js"

export interface NormalizedArgs {
  /** The command path named (as far as it goes: a group, or nothing). */
  readonly path: ReadonlyArray<string>
  readonly argv: ReadonlyArray<string>
  readonly help: boolean
  readonly version: boolean
  /**
   * When `path` names a group, not a command: the word where a command name was expected
   * (undefined when there is none). The command line then names no command (a usage error).
   */
  readonly incomplete?: { readonly stray: string | undefined; readonly choices: ReadonlyArray<string> } | undefined
}

const GLOBAL_WITH_VALUE = new Set(["--url", "--admin-url", "--actor", "--actor-header"])
const GLOBAL_FLAGS = new Set(["--json"])
const HELP = new Set(["-h", "--help"])

let tree: ReadonlyMap<string, ReadonlySet<string>> | undefined

export const normalizeArgs = (argv: ReadonlyArray<string>): NormalizedArgs => {
  tree ??= commandTree()
  const path: Array<string> = []
  const globals: Array<string> = []
  let help = false
  let version = false
  let i = 0
  // Before and between the command's words: global options, help, and the words themselves.
  for (; i < argv.length; i++) {
    const children = tree.get(path.join(" "))
    if (children === undefined) break // a leaf: the rest is its own
    const token = argv[i]!
    if (token === "--") break
    if (GLOBAL_FLAGS.has(token)) globals.push(token)
    else if (GLOBAL_WITH_VALUE.has(token) && i + 1 < argv.length) globals.push(token, argv[++i]!)
    else if (GLOBAL_WITH_VALUE.has(token.split("=", 1)[0]!) && token.includes("=")) globals.push(token)
    else if (HELP.has(token)) help = true
    else if (token === "--version" && path.length === 0) version = true
    else if (children.has(token)) path.push(token)
    else break
  }
  const rest = argv.slice(i)
  const end = rest.indexOf("--")
  if ((end === -1 ? rest : rest.slice(0, end)).some((t) => HELP.has(t))) help = true
  const children = tree.get(path.join(" "))
  const incomplete = children === undefined ? undefined : { stray: rest[0], choices: [...children] }
  return { path, argv: [...path, ...globals, ...rest], help, version, incomplete }
}
