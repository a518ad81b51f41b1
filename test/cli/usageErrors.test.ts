/**
 * Every usage error reads the same, whichever command and whichever part of the CLI finds it
 * (effect/cli's parsing, the CLI's own flag and argument checks, a command's checks): one line
 * `svc: <message>` naming the flag, argument or command and the value given, with the closest
 * flag or command when one is near; then `Run 'svc <command> --help'` naming the command as far
 * as it was named; exit code 2; nothing on stdout. No gateway is needed: usage errors are found
 * before anything is sent (SVC_URL points nowhere, so a sent request would exit 1).
 * Most cases run the CLI in this process; a few run the real `svc` process.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { svc } from "./harness.js"
import { runInProcess } from "./inProcess.js"

const ENTITY = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"
const dir = mkdtempSync(path.join(tmpdir(), "svc-usage-"))
// Records with an integer a float cannot hold: parsed as they are, they would be sent (and
// stored) as 9007199254740992 with no word said.
const BIG_JSON = path.join(dir, "big.json")
writeFileSync(BIG_JSON, `[{"a":1},{"account":{"id":9007199254740993}}]`)
const BIG_NDJSON = path.join(dir, "big.ndjson")
writeFileSync(BIG_NDJSON, `{"a":1}\n{"id":-12345678901234567890}\n`)
const ENV = { SVC_URL: "http://127.0.0.1:1", SVC_ADMIN_URL: "http://127.0.0.1:1" }

const CASES: ReadonlyArray<readonly [ReadonlyArray<string>, string, RegExp]> = [
  [[], "svc", /^missing command: one of health, entities/],
  [["nope"], "svc", /^unknown command "nope": one of health, entities, .*, mcp$/],
  [["--json", "nope"], "svc", /^unknown command "nope"/],
  [["taks"], "svc", /^unknown command "taks": one of .*: did you mean tasks\?$/],
  [["tasks"], "svc tasks", /^'svc tasks' needs a command: one of list, workflows, start$/],
  [["tasks", "notauuid"], "svc tasks", /^'svc tasks' has no command "notauuid": one of list, workflows, start$/],
  [["tasks", "lst"], "svc tasks", /^'svc tasks' has no command "lst": one of list, workflows, start: did you mean list\?$/],
  [["entities", "--bogus"], "svc entities", /^unknown flag "--bogus" for 'svc entities'$/],
  [["task", "approve"], "svc task approve", /^missing argument <taskId>$/],
  [["task", "ui", "not-a-task-id"], "svc task ui", /"not-a-task-id" is not a task id/],
  [["health", "--bogus"], "svc health", /^unknown flag "--bogus" for 'svc health'$/],
  // The closest flag: the command's own, or one every command shares.
  [["task", "approve", TASK, "--coments", "ok"], "svc task approve", /^unknown flag "--coments" for 'svc task approve': did you mean --comments\?$/],
  [["task", "approve", TASK, "--comment=ok"], "svc task approve", /^unknown flag "--comment" for 'svc task approve': did you mean --comments\?$/],
  [["health", "--jsn"], "svc health", /^unknown flag "--jsn" for 'svc health': did you mean --json\?$/],
  [["tasks", "list", ENTITY, "--stat", "FAILED"], "svc tasks list", /did you mean --status\?$/],
  [["health", "extra"], "svc health", /^unexpected argument "extra"$/],
  [["health", "-x"], "svc health", /^unknown flag "-x" for 'svc health'$/],
  [["health", "--json=maybe"], "svc health", /^--json: "maybe" is not one of true, yes, /],
  [["-", "health"], "svc", /^unknown command "-"/],
  [["x".repeat(100_000)], "svc", /^unknown command "x{63}…": one of health, .*, mcp$/],
  [["agents", "register", "x://y"], "svc agents register", /^missing flag --tenant; missing flag --name$/],
  [["agents", "register", "not-a-uri", "--tenant", "acme", "--name", "X"], "svc agents register", /is not <kind>:\/\/<native-id>/],
  [["subledger", "reject", "expenses", "x"], "svc subledger reject", /^<rowId>: "x" is not a UUID$/],
  [["tasks", "list", ENTITY, "--limit", "0"], "svc tasks list", /^--limit: must be an integer from 1 to 500$/],
  // Values effect/cli's own words reported without the flag ("'abc' is not a integer").
  [["tasks", "list", ENTITY, "--limit", "abc"], "svc tasks list", /^--limit: "abc" is not an integer$/],
  [["tasks", "list", ENTITY, "--limit"], "svc tasks list", /^--limit: needs a value$/],
  [["events", "follow", TASK, "--interval", "soon"], "svc events follow", /^--interval: "soon" is not a number$/],
  [["tasks", "list", ENTITY, "--status", "done"], "svc tasks list", /^--status: "done" is not one of IN_PROGRESS, COMPLETED, FAILED$/],
  [["task", "row-action", TASK, "approve_row", ENTITY], "svc task row-action", /^<action>: "approve_row" is not one of reject_row, resolve_flag, edit_cell$/],
  // A value is quoted with its control characters escaped and clipped: the message stays one line.
  [["tasks", "list", ENTITY, "--status", "a\nb\u001b[31m"], "svc tasks list", /^--status: "a\\nb\\u001b\[31m" is not one of/],
  [["tasks", "list", ENTITY, "--status", "x".repeat(500)], "svc tasks list", /^--status: "x{63}…" is not one of/],
  // What a terminal would act on or reorder (escape sequences, bidirectional overrides) is escaped.
  [["subledger", "reject", "expenses", "\u001b]0;pwned\u0007\u202egpj.exe"], "svc subledger reject", /^<rowId>: "\\u001b\]0;pwned\\u0007\\u202egpj\.exe" is not a UUID$/],
  [["--url", "http://h\u202e:1/", "health"], "svc health", /^--url: "http:\/\/h\\u202e:1\/" is not an http\(s\) URL$|cannot reach/],
  [["tasks", "list", ENTITY, "--status", "\u0130N_PROGRESS"], "svc tasks list", /^--status: "\u0130N_PROGRESS" is not one of/],
  // Local files: named by the argument or flag, in words.
  [["files", "upload", TASK, "/nonexistent.pdf", "--source", "r"], "svc files upload", /^<path>: "\/nonexistent.pdf" does not exist$/],
  [["files", "upload", TASK, dir, "--source", "r"], "svc files upload", /^<path>: ".*" is a directory, not a file$/],
  [["data", "ingest", TASK, "/nonexistent.json"], "svc data ingest", /^<file>: "\/nonexistent.json" does not exist$/],
  [["data", "ingest", TASK, BIG_JSON], "svc data ingest", /big\.json: \[1\]\.account\.id: the number 9007199254740993 cannot be stored exactly/],
  [["data", "ingest", TASK, BIG_NDJSON], "svc data ingest", /big\.ndjson:2: id: the number -12345678901234567890 cannot be stored exactly/],
  [["agents", "add-version", ENTITY, "v1", "--config-file", "/nonexistent.json"], "svc agents add-version", /^--config-file: "\/nonexistent.json" does not exist$/],
  // Values the contract refuses: found before sending.
  [["tasks", "list", ENTITY, "--awaiting", ""], "svc tasks list", /^--awaiting: must be a component name/],
  [["tasks", "list", ENTITY, "--awaiting", "TABLE REVIEW"], "svc tasks list", /^--awaiting: must be a component name/],
  [["tasks", "list", ENTITY, "--cursor", "a+b"], "svc tasks list", /^--cursor: must be/],
  [["tasks", "list", ENTITY, "--cursor", "zzz"], "svc tasks list", /^--cursor: must be/],
  [["tasks", "start", ENTITY, "w", "--param", "novalue"], "svc tasks start", /--param/],
  // A value the JSON reading would change: sent unchecked, it would go as another number.
  [["tasks", "start", ENTITY, "w", "--no-check", "--param", "limit=9007199254740993"], "svc tasks start", /^--param limit: the number 9007199254740993 cannot be stored exactly/],
  [["subledger", "edit", "expenses", ENTITY, "amount_gross", "12345678901234567890"], "svc subledger edit", /^value: the number 12345678901234567890 cannot be stored exactly/],
  [["agents", "add-version", ENTITY, "v1", "--config", `{"n":{"id":9007199254740993}}`], "svc agents add-version", /^--config: n\.id: the number 9007199254740993 cannot be stored exactly/]
]

const expectUsageError = (run: { code: number | null; stdout: string; stderr: string }, [args, command, message]: (typeof CASES)[number]) => {
  const what = `svc ${args.join(" ")}: ${run.stderr}`
  expect(run.code, what).toBe(2)
  expect(run.stdout, what).toBe("")
  const lines = run.stderr.split("\n")
  expect(lines, what).toEqual([expect.stringMatching(/^svc: (?!svc)/), `Run '${command} --help'`, ""])
  expect(lines[0]!.slice("svc: ".length), what).toMatch(message)
}

afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("usage errors", () => {
  it("name the flag, argument or command and the value, one line and the help hint, exit code 2", async () => {
    for (const c of CASES) expectUsageError(await runInProcess(c[0], ENV), c)
  }, 60_000)

  it("read the same from the real svc process", async () => {
    const picked = CASES.filter(([args]) =>
      args.length === 0 || args.includes("--coments") || args.includes("/nonexistent.pdf") || args.includes("abc")
    )
    expect(picked).toHaveLength(4)
    const runs = await Promise.all(picked.map(([args]) => svc(args, { env: ENV })))
    runs.forEach((run, i) => expectUsageError(run, picked[i]!))
  }, 120_000)
})
