/**
 * Servers measured against each other in the same rounds (the experiments' before/after runs):
 * each loaded in turn, the order reversed every round (the bench saw a position effect), 0.5 s
 * idle before each measurement; then each server's medians and its ratios to the first.
 */
import { setTimeout as sleep } from "node:timers/promises"
import { type Measurement, median } from "./load.js"
import type { Server } from "./proc.js"

/** One warm-up of `warmUpS` each, then `rounds` measurements of `seconds` each: each server's, in order. */
export const interleavedRounds = async (
  servers: ReadonlyArray<Server>,
  rounds: number,
  seconds: number,
  load: (server: Server, durationS: number) => Promise<Measurement>,
  warmUpS = 1
): Promise<Map<string, Array<Measurement>>> => {
  const results = new Map<string, Array<Measurement>>(servers.map((s) => [s.name, []]))
  for (const s of servers) await load(s, warmUpS)
  for (let r = 0; r < rounds; r++) {
    for (const s of r % 2 === 0 ? servers : [...servers].reverse()) {
      await sleep(500)
      const m = await load(s, seconds)
      if (m.failures.length > 0) console.log(`${s.name}: ${m.failures.join(", ")}`)
      results.get(s.name)!.push(m)
    }
  }
  return results
}

/**
 * Per server: median requests/s and CPU per request (named `rate` and `per`: "req/s" and "req",
 * "calls/s" and "call"), each round's CPU, and the ratios to the first server; `more` adds to a
 * server's line.
 */
export const printAgainstFirst = (
  servers: ReadonlyArray<Server>,
  results: ReadonlyMap<string, ReadonlyArray<Measurement>>,
  options: { readonly rate: string; readonly per: string; readonly nameWidth: number; readonly cpuDigits: number; readonly more?: (server: Server) => string }
): void => {
  const { cpuDigits, more, nameWidth, per, rate } = options
  const first = servers[0]!.name
  const rps0 = median(results.get(first)!.map((m) => m.rps))
  const cpu0 = median(results.get(first)!.map((m) => m.cpuUsPerReq))
  for (const s of servers) {
    const ms = results.get(s.name)!
    const rps = median(ms.map((m) => m.rps))
    const cpu = median(ms.map((m) => m.cpuUsPerReq))
    console.log(
      `${s.name.padEnd(nameWidth)} ${rps.toFixed(0).padStart(6)} ${rate}  ${cpu.toFixed(cpuDigits).padStart(6)} us CPU/${per}  ` +
        `(rounds: ${ms.map((m) => m.cpuUsPerReq.toFixed(0)).join(" ")})  vs ${first}: ${(rps / rps0).toFixed(2)}x ${rate}, ` +
        `${(cpu0 / cpu).toFixed(2)}x capacity from CPU${more === undefined ? "" : `, ${more(s)}`}`
    )
  }
}
