/**
 * How far apart two processes stamp requests written to them at one moment: the parent writes
 * one line to each of N listening children in one tick (as a client writing decisions
 * together to two replicas), each child stamps it with the gateway's clock
 * (src/lib/preciseClock.ts) as it reads it; prints the spread (latest minus earliest) per round
 * as percentiles. Run it beside a loaded machine (the test suite) to see what a replica's
 * settle window must cover.
 *
 * Usage: tsx bench/experiments/arrival-skew.ts [rounds=2000] [children=2] [gapMs=10]
 */
import { fork } from "node:child_process"
import * as net from "node:net"

const [rounds = 2000, children = 2, gapMs = 10] = process.argv.slice(2).map(Number)

if (process.env.SKEW_CHILD === "1") {
  const { preciseNowMs } = await import("../../src/lib/preciseClock.js")
  const server = net.createServer((socket) => {
    socket.setNoDelay(true)
    socket.on("data", () => process.send!(preciseNowMs()))
  })
  server.listen(0, "127.0.0.1", () => process.send!({ port: (server.address() as net.AddressInfo).port }))
} else {
  const kids = Array.from({ length: children }, () => fork(new URL(import.meta.url).pathname, [], { env: { ...process.env, SKEW_CHILD: "1" }, execArgv: process.execArgv }))
  const ports = await Promise.all(kids.map((k) => new Promise<number>((r) => k.once("message", (m: any) => r(m.port)))))
  const sockets = await Promise.all(ports.map((p) => new Promise<net.Socket>((r) => { const s = net.connect(p, "127.0.0.1", () => r(s)); s.setNoDelay(true) })))
  const spreads: Array<number> = []
  for (let i = 0; i < rounds; i++) {
    const stamps = kids.map((k) => new Promise<number>((r) => k.once("message", (m: any) => r(m))))
    for (const s of sockets) s.write("x")
    const got = await Promise.all(stamps)
    spreads.push(Math.max(...got) - Math.min(...got))
    await new Promise((r) => setTimeout(r, gapMs))
  }
  spreads.sort((a, b) => a - b)
  const at = (q: number) => spreads[Math.min(spreads.length - 1, Math.floor(q * spreads.length))]!.toFixed(2)
  console.log(`rounds ${rounds} children ${children}: spread ms p50 ${at(0.5)} p99 ${at(0.99)} p99.9 ${at(0.999)} max ${at(1)}`)
  for (const s of sockets) s.destroy()
  for (const k of kids) k.kill()
}
