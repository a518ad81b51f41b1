/**
 * Starts the real gateway as `npm start` does (node + tsx on src/main.ts) in a child process,
 * on a free loopback port, and stops it by its pid.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

export interface RunningService {
  readonly url: string
  readonly pid: number
  readonly output: () => string
  readonly stop: () => Promise<void>
}

export const startService = async (
  env: Record<string, string>,
  entry = "src/main.ts",
  portVariable = "PORT"
): Promise<RunningService> => {
  const port = await freePort()
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", entry], {
    cwd: ROOT,
    env: { ...process.env, HOST: "127.0.0.1", [portVariable]: String(port), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (d) => (output += d))
  child.stderr!.on("data", (d) => (output += d))
  const url = `http://127.0.0.1:${port}`
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(child.pid!, "SIGTERM")
      const timer = setTimeout(() => child.exitCode === null && process.kill(child.pid!, "SIGKILL"), 5000)
      await exited
      clearTimeout(timer)
    }
  }
  const deadline = Date.now() + 30_000
  const probe = entry === "src/main.ts" ? "/v1/health" : "/workspace/openapi.json"
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}:\n${output}`)
    try {
      const res = await fetch(url + probe, { signal: AbortSignal.timeout(2000) })
      if (res.ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`service did not become healthy:\n${output}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return { url, pid: child.pid!, output: () => output, stop }
}

export interface JsonResponse {
  readonly status: number
  readonly body: any
  readonly headers: Headers
}

export const http = async (method: string, url: string, body?: unknown): Promise<JsonResponse> => {
  const res = await fetch(url, {
    method,
    ...(body !== undefined ? { body: JSON.stringify(body), headers: { "content-type": "application/json" } } : {})
  })
  const text = await res.text()
  return { status: res.status, body: text === "" ? undefined : JSON.parse(text), headers: res.headers }
}
