#!/usr/bin/env node
/**
 * Runs the tests N times in a row, to catch a test that fails by chance: `npm run test:repeat --
 * <N> [vitest arguments, e.g. files]`. Each run is a fresh `vitest run` (its own PostgreSQL and
 * build check, as `npm test`), with a JSON report; at the end, per run: wall time, passed and
 * failed counts, and every failed test by file and name with the first line of its error (the
 * wait that timed out names itself there). Exit 1 if any run failed.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"

const [countText, ...vitestArgs] = process.argv.slice(2)
const count = Number(countText)
if (!Number.isInteger(count) || count < 1) {
  console.error("usage: npm run test:repeat -- <runs, a positive integer> [vitest arguments, e.g. test/events/stream.test.ts]")
  process.exit(2)
}

const dir = mkdtempSync(join(tmpdir(), "repeat-tests-"))
const runs = []
try {
  for (let i = 1; i <= count; i++) {
    const report = join(dir, `run-${i}.json`)
    const started = Date.now()
    console.error(`repeat-tests: run ${i} of ${count}: vitest run ${vitestArgs.join(" ")}`)
    const result = spawnSync("vitest", ["run", ...vitestArgs, "--reporter=default", "--reporter=json", `--outputFile.json=${report}`], {
      stdio: ["ignore", "inherit", "inherit"],
      shell: false
    })
    const seconds = (Date.now() - started) / 1000
    let failed = []
    let passed = 0
    try {
      const json = JSON.parse(readFileSync(report, "utf8"))
      for (const file of json.testResults ?? []) {
        for (const t of file.assertionResults ?? []) {
          if (t.status === "passed") passed++
          else if (t.status === "failed") {
            const first = String(t.failureMessages?.[0] ?? "").split("\n").find((l) => l.trim() !== "") ?? ""
            failed.push(`${relative(process.cwd(), file.name)} > ${t.fullName}: ${first.slice(0, 300)}`)
          }
        }
        if ((file.assertionResults ?? []).length === 0 && file.status === "failed") {
          failed.push(`${relative(process.cwd(), file.name)}: ${String(file.message ?? "failed to run").split("\n")[0]}`)
        }
      }
    } catch {
      failed = [`(no report: vitest exited with ${result.status ?? result.signal})`]
    }
    if (result.status !== 0 && failed.length === 0) failed.push(`(vitest exited with ${result.status ?? result.signal})`)
    runs.push({ i, seconds, passed, failed })
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}

console.log("\nrepeat-tests summary")
for (const r of runs) {
  console.log(`run ${r.i}: ${r.seconds.toFixed(0)} s, ${r.passed} passed, ${r.failed.length} failed`)
  for (const f of r.failed) console.log(`  FAILED ${f}`)
}
process.exit(runs.some((r) => r.failed.length > 0) ? 1 : 0)
