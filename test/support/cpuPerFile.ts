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

/**
 * utime + stime + cutime + cstime of a /proc `stat` text, in ms (USER_HZ is 100 on Linux). The
 * fields are counted after the command name, which may hold spaces (bench/lib/proc.ts's
 * `statFields` reads them so, without the children's time and without the name needed below).
 */
const statCpuMs = (stat: string) => {
  const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 10
}

/** This process's CPU, its reaped children's included, in ms. */
const cpuMs = () => statCpuMs(readFileSync("/proc/self/stat", "utf8"))

/** CPU of every Chromium and PostgreSQL process now running (their reaped children included), in ms. */
const sharedCpuMs = () => {
  let ms = 0
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      if (/^(chrom|postgres)/.test(stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")))) ms += statCpuMs(stat)
    } catch {
      // gone meanwhile
    }
  }
  return ms
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
