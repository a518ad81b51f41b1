/**
 * Every scenario runs alone: `BENCH_ONLY=<S> npm run bench` for each of S1-S8 in turn, with tiny
 * rounds (BENCH_WARMUP_S=0 BENCH_ROUND_S=1 BENCH_ROUNDS=1 BENCH_RESULTS=-; S8 with 2 uploads, 4
 * streams, 2 aborters), each in its own process. A scenario passes when the run exits 0: it
 * started what it needs, every counted response was a 2xx and every probe answered alike. Not
 * part of `npm test` (a few minutes, and it pins both cores while it runs).
 *
 * Usage: tsx bench/checkOnly.ts [S1,S2,...]   (default: all). Exit 1 when any failed.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const ALL = ["S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8"]
const wanted = (process.argv[2] ?? ALL.join(",")).split(",").map((s) => s.trim().toUpperCase()).filter((s) => s !== "")
const unknown = wanted.filter((s) => !ALL.includes(s))
if (unknown.length > 0) throw new Error(`unknown scenario(s) ${unknown.join(", ")}; expected some of ${ALL.join(",")}`)

const runAlone = (scenario: string) =>
  new Promise<{ code: number | null; seconds: number; tail: string }>((resolve) => {
    const started = performance.now()
    const child = spawn(process.execPath, ["--import", "tsx", "bench/run.ts"], {
      cwd: ROOT,
      env: {
        ...process.env,
        BENCH_ONLY: scenario,
        BENCH_WARMUP_S: "0",
        BENCH_ROUND_S: "1",
        BENCH_ROUNDS: "1",
        BENCH_RESULTS: "-",
        BENCH_S8_UPLOADS: process.env.BENCH_S8_UPLOADS ?? "2",
        BENCH_S8_STREAMS: process.env.BENCH_S8_STREAMS ?? "4",
        BENCH_S8_ABORTERS: process.env.BENCH_S8_ABORTERS ?? "2"
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    const keep = (c: Buffer) => (out = (out + c.toString("utf8")).slice(-6000))
    child.stdout!.on("data", keep)
    child.stderr!.on("data", keep)
    child.on("close", (code) => resolve({ code, seconds: (performance.now() - started) / 1000, tail: out }))
  })

const results: Array<string> = []
let failed = 0
for (const scenario of wanted) {
  const r = await runAlone(scenario)
  const ok = r.code === 0
  if (!ok) failed++
  const line = `BENCH_ONLY=${scenario}: ${ok ? "ok" : `FAILED (exit ${r.code})`} in ${r.seconds.toFixed(0)} s`
  results.push(line)
  console.log(line)
  if (!ok) console.log(r.tail.split("\n").slice(-25).map((l) => `  | ${l}`).join("\n"))
}
console.log(`\n${results.join("\n")}`)
process.exitCode = failed > 0 ? 1 : 0
