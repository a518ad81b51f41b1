/**
 * Issue 24: every usage error reads the same, whichever command and whichever part of the CLI
 * finds it (the command tree, @effect/cli's option parsing, a command's own checks): one line
 * `svc: <message>` (never `svc: svc ...`), then `Run 'svc <command> --help'` naming the command
 * as far as it was named, exit code 2, nothing on stdout. No gateway is needed: usage errors are
 * found before anything is sent (SVC_URL points nowhere, so a sent request would exit 1).
 */
import { describe, expect, it } from "vitest"
import { svc } from "./harness.js"

const ENTITY = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"

const CASES: ReadonlyArray<readonly [ReadonlyArray<string>, string, RegExp]> = [
  [[], "svc", /^missing command: one of health, entities/],
  [["nope"], "svc", /^unknown command "nope": one of health, entities/],
  [["--json", "nope"], "svc", /^unknown command "nope"/],
  [["tasks"], "svc tasks", /^'svc tasks' needs a command: one of list, workflows, start$/],
  [["tasks", "notauuid"], "svc tasks", /^'svc tasks' has no command "notauuid": one of list, workflows, start$/],
  [["entities", "--bogus"], "svc entities", /^'svc entities' has no command "--bogus"/],
  [["task", "approve"], "svc task approve", /^Missing argument <taskId>$/],
  [["task", "ui", "not-a-task-id"], "svc task ui", /"not-a-task-id" is not a task id/],
  [["health", "--bogus"], "svc health", /unknown argument: '--bogus'/],
  [["agents", "register", "x://y"], "svc agents register", /^Expected to find option: '--tenant'; Expected to find option: '--name'$/],
  [["agents", "register", "not-a-uri", "--tenant", "acme", "--name", "X"], "svc agents register", /is not <kind>:\/\/<native-id>/],
  [["subledger", "reject", "expenses", "x"], "svc subledger reject", /^<rowId>: "x" is not a UUID$/],
  [["tasks", "list", ENTITY, "--limit", "0"], "svc tasks list", /^--limit: must be an integer from 1 to 500$/],
  [["tasks", "list", ENTITY, "--status", "done"], "svc tasks list", /IN_PROGRESS, COMPLETED, FAILED/],
  // Values the contract refuses: found before sending (was "unexpected response body: <schema>", exit 1).
  [["tasks", "list", ENTITY, "--awaiting", ""], "svc tasks list", /^--awaiting: must be a component name/],
  [["tasks", "list", ENTITY, "--awaiting", "TABLE REVIEW"], "svc tasks list", /^--awaiting: must be a component name/],
  [["tasks", "list", ENTITY, "--cursor", "a+b"], "svc tasks list", /^--cursor: must be/],
  [["tasks", "list", ENTITY, "--cursor", "zzz"], "svc tasks list", /^--cursor: must be/],
  [["tasks", "start", ENTITY, "w", "--param", "novalue"], "svc tasks start", /--param/]
]

describe("usage errors", () => {
  it("are one line 'svc: <message>' and the command's help hint, exit code 2, for every kind", async () => {
    const env = { SVC_URL: "http://127.0.0.1:1", SVC_ADMIN_URL: "http://127.0.0.1:1" }
    // Four at a time: each run is a node process compiling the CLI.
    const runs: Array<Awaited<ReturnType<typeof svc>>> = []
    for (let i = 0; i < CASES.length; i += 4) {
      runs.push(...await Promise.all(CASES.slice(i, i + 4).map(([args]) => svc(args, { env }))))
    }
    runs.forEach((run, i) => {
      const [args, command, message] = CASES[i]!
      const what = `svc ${args.join(" ")}: ${run.stderr}`
      expect(run.code, what).toBe(2)
      expect(run.stdout, what).toBe("")
      const lines = run.stderr.split("\n")
      expect(lines, what).toEqual([expect.stringMatching(/^svc: (?!svc)/), `Run '${command} --help'`, ""])
      expect(lines[0]!.slice("svc: ".length), what).toMatch(message)
    })
  }, 120_000)
})
