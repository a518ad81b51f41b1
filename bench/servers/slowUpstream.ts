/**
 * S2's upstream delay: a pass-through proxy in front of the workspace service (`npm run
 * workspace`, bench/run.ts starts it on a prepared database) that holds every next-step lookup
 * (`.../next-step`, `.../next-steps`, and the task board `.../board`, which makes them)
 * BENCH_LOOKUP_MS before forwarding it. A gateway started with
 * SVC_WORKSPACE_URL pointing here waits on what a shipped gateway waits on: real HTTP calls to a
 * workspace service whose lookups take that long. Everything else passes through at once.
 *
 * Settings: PORT, BENCH_UPSTREAM_URL (the workspace service), BENCH_LOOKUP_MS (5).
 */
import * as http from "node:http"

const port = Number(process.env.PORT)
const upstream = new URL(process.env.BENCH_UPSTREAM_URL ?? "")
const lookupMs = Number(process.env.BENCH_LOOKUP_MS ?? "5")
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 })
const LOOKUP = /\/(next-steps?|board)(\?|$)/

const forward = (req: http.IncomingMessage, res: http.ServerResponse) => {
  const out = http.request(
    { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    }
  )
  out.on("error", () => {
    if (!res.headersSent) res.writeHead(502)
    res.end()
  })
  req.pipe(out)
}

http.createServer((req, res) => {
  if (lookupMs > 0 && LOOKUP.test(req.url ?? "")) setTimeout(forward, lookupMs, req, res)
  else forward(req, res)
}).listen(port, "127.0.0.1")

for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(0))
