// Preload (node -r) for bench/experiments/json-blocks.ts: at exit, writes the longest synchronous callbacks
// (async_hooks before/after at depth 0) by main-thread CPU and wall time to LAG_OUT.
const ah = require("node:async_hooks")
const types = new Map()
let depth = 0, start = 0, cpu0 = 0, startType = ""
const top = []
const cpu = () => { const u = process.threadCpuUsage(); return (u.user + u.system) / 1000 }
ah.createHook({
  init(id, type) { types.set(id, type) },
  before(id) { if (depth++ === 0) { start = performance.now(); cpu0 = cpu(); startType = types.get(id) ?? "?" } },
  after() { if (--depth === 0) { const c = cpu() - cpu0; if (c > 20) top.push([c, performance.now() - start, startType, new Date().toISOString().slice(17, 23)]) } },
  destroy(id) { types.delete(id) }
}).enable()
process.on("exit", () => {
  top.sort((a, b) => b[0] - a[0])
  require("node:fs").writeFileSync(process.env.LAG_OUT ?? "/tmp/json-prof/lag.txt", top.slice(0, 12).map(([c, ms, t, at]) => `${c.toFixed(0)} ms CPU (${ms.toFixed(0)} wall) ${t} @${at}`).join("\n") + `\n(${top.length} over 20 ms CPU)\n`)
})
