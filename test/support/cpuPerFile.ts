/**
 * With TEST_CPU_LOG set (a file path), each test file appends one JSON line to it: its wall
 * time and the CPU it cost, this worker's own and that of the processes it started and reaped
 * (the gateways, CLIs and receivers a file runs), and apart (`sharedMs`) what the run's
 * Chromium and PostgreSQL processes spent meanwhile, which count for the files that use them
 * (the browser tests, *.pg.test.ts). The run is bound by CPU: this says where it goes.
 */
import { appendFileSync, readdirSync, readFileSync } from "node:fs"
import { relative } from "node:path"
import { afterAll, beforeAll, expect } from "vitest"

const log = process.env.TEST_CPU_LOG

/** utime + stime + cutime + cstime of this process, in ms (USER_HZ is 100 on Linux). */
const cpuMs = () => {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 10
}

/** CPU of every Chromium and PostgreSQL process now running (their reaped children included), in ms. */
const sharedCpuMs = () => {
  let ticks = 0
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))
      if (!/^(chrom|postgres)/.test(comm)) continue
      const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ")
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])
    } catch {
      // gone meanwhile
    }
  }
  return ticks * 10
}

if (log !== undefined && log !== "") {
  let startCpu = 0
  let startShared = 0
  let startWall = 0
  beforeAll(() => {
    startCpu = cpuMs()
    startShared = sharedCpuMs()
    startWall = performance.now()
  })
  afterAll(() => {
    const file = expect.getState().testPath
    if (file === undefined) return
    const line = {
      file: relative(process.cwd(), file).split("\\").join("/"),
      wallMs: Math.round(performance.now() - startWall),
      cpuMs: cpuMs() - startCpu,
      sharedMs: Math.max(0, sharedCpuMs() - startShared)
    }
    appendFileSync(log, `${JSON.stringify(line)}\n`)
  })
}
