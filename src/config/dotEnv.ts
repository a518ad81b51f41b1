/**
 * `.env` in the working directory, read before any setting (both processes' main modules import it first):
 * `.env.example` says "copy to .env", and `npm start` / `node dist/main.js` then take it. The
 * format is Node's own (`node --env-file`, util.parseEnv): NAME=value lines, `#` comments,
 * quoted values, `export ` prefixes. A variable already in the process environment wins over
 * the file (what a process manager or a shell sets is meant), as with `node --env-file`.
 *
 * No file: nothing happens. A file that cannot be read or parsed ends the start with one line
 * (exit 1), like any other bad setting.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from "node:fs"
import { resolve } from "node:path"
import { parseEnv } from "node:util"

export interface DotEnvRead {
  /** Absolute path of the file read. */
  readonly path: string
  /** Names the file set (absent from the environment). */
  readonly applied: ReadonlyArray<string>
  /** Names the file also has but the environment already set (the environment's value is kept). */
  readonly shadowed: ReadonlyArray<string>
}

/** Reads `file` into `env` without overriding what `env` has; undefined when there is no file. */
export const loadDotEnv = (file = resolve(".env"), env: NodeJS.ProcessEnv = process.env): DotEnvRead | undefined => {
  let text: string
  try {
    text = readRegularFile(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw new Error(`cannot read ${file}: ${(error as Error).message} (remove it or make it a readable file of NAME=value lines)`)
  }
  // An editor's byte order mark would be part of the first name (so that setting went unread, unwarned).
  const parsed = parseEnv(text.startsWith("\uFEFF") ? text.slice(1) : text) as Record<string, string>
  const applied: Array<string> = []
  const shadowed: Array<string> = []
  for (const [name, value] of Object.entries(parsed)) {
    if (env[name] !== undefined) shadowed.push(name)
    else {
      env[name] = value
      applied.push(name)
    }
  }
  return { path: file, applied, shadowed }
}

/**
 * The file's text, when it is a regular file: a FIFO would hold the start until something wrote to
 * it, and a link to /dev/zero would read until memory ran out, both without a word. Opened without
 * blocking (a FIFO's open waits for a writer otherwise), then judged by what was opened.
 */
const readRegularFile = (file: string): string => {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) {
      throw Object.assign(new Error(`not a regular file (${kindOf(stat)})`), { code: "ENOTREG" })
    }
    return readFileSync(fd, "utf8")
  } finally {
    closeSync(fd)
  }
}

const kindOf = (stat: Stats) =>
  stat.isDirectory() ? "a directory" : stat.isFIFO() ? "a FIFO" : stat.isCharacterDevice() ? "a character device"
  : stat.isBlockDevice() ? "a block device" : stat.isSocket() ? "a socket" : "not a file"

/** What this process read at start (main.ts logs it). */
export const dotEnvAtStart: DotEnvRead | undefined = (() => {
  try {
    return loadDotEnv()
  } catch (error) {
    process.stderr.write(`Cannot start: ${(error as Error).message}\n`)
    process.exit(1)
  }
})()

/** The start-up line about the file: undefined when there was none. */
export const describeDotEnv = (read: DotEnvRead | undefined = dotEnvAtStart): string | undefined =>
  read === undefined
    ? undefined
    : `settings: read ${read.path} (${read.applied.length} set from it` +
      (read.shadowed.length > 0 ? `; the environment's own ${read.shadowed.join(", ")} kept` : "") + ")"
