/**
 * How `--help` pages print: effect/cli's generated help (from each command's, argument's and
 * flag's one description), without colour codes, each line wrapped at 100 columns under the
 * column it started in.
 */
import * as CliOutput from "effect/cli/CliOutput"

const WIDTH = 100

/** Where a wrapped line goes on: under a table row's description, else under the line's own text. */
const hangingIndent = (line: string): number => {
  const row = /^( +\S.*? {2,})\S/.exec(line)
  if (row !== null && row[1]!.length <= WIDTH / 2) return row[1]!.length
  return /^ */.exec(line)![0].length
}

/** `line` cut at spaces into lines of at most WIDTH columns (a longer word stays whole). */
export const wrapLine = (line: string): Array<string> => {
  if (line.length <= WIDTH) return [line]
  const indent = " ".repeat(hangingIndent(line))
  const out: Array<string> = []
  let current = ""
  for (const word of line.trimEnd().split(/(?<=\S) (?=\S)/)) {
    if (current !== "" && current.length + 1 + word.trimStart().length > WIDTH) {
      out.push(current)
      current = indent + word.trimStart()
    } else {
      current = current === "" ? word : `${current} ${word}`
    }
  }
  if (current.trim() !== "") out.push(current)
  return out
}

const generated = CliOutput.defaultFormatter({ colors: false })

export const helpFormatter: CliOutput.Formatter = {
  ...generated,
  formatHelpDoc: (doc) => generated.formatHelpDoc(doc).split("\n").flatMap(wrapLine).join("\n")
}
