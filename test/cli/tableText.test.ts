/**
 * The CLI's tables and field lists print served text (a task's title, set by whoever started it
 * or loaded a fixture) with what a terminal acts on escaped: ESC and CSI sequences (clear the
 * screen, recolour, retitle the window), C1 controls, bidi overrides, carriage returns. The list
 * printed them raw, so a title could rewrite the operator's screen. Against a stand-in gateway.
 */
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { stopAllProcesses, svc } from "./harness.js"

const ENTITY = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"
const TITLE = "Close\u001b[2J\u001b]0;owned\u0007 \u009b31m\u202egnp.exe\r overwritten\ttab"

let server: Server
let url: string

beforeAll(async () => {
  server = createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://x")
    if (req.method === "GET" && u.pathname === `/v1/entities/${ENTITY}/tasks`) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify([{
        id: TASK,
        title: TITLE,
        status: "IN_PROGRESS",
        priority: "HIGH\u001b[5m",
        entityId: ENTITY,
        workflowId: "expense-review",
        createdAt: "2026-11-01T09:00:00Z",
        awaiting: "TABLE_REVIEW"
      }]))
      return
    }
    res.writeHead(404, { "content-type": "application/json" }).end('{"statusCode":404,"message":"no","error":"Not Found"}')
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
})
afterAll(async () => {
  stopAllProcesses()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

describe("svc tasks list", () => {
  it("prints a title's terminal controls escaped, on one row", async () => {
    const r = await svc(["tasks", "list", ENTITY], { env: { SVC_URL: url } })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).not.toMatch(/[\u001b\u009b\u0007\u202e\r\t]/)
    const rows = r.stdout.trimEnd().split("\n")
    expect(rows).toHaveLength(2)
    expect(rows[1]).toContain(String.raw`Close\u001b[2J\u001b]0;owned\u0007 \u009b31m\u202egnp.exe\u000d overwritten\u0009tab`)
    // --json prints the answer as served.
    const json = await svc(["tasks", "list", ENTITY, "--json"], { env: { SVC_URL: url } })
    expect((JSON.parse(json.stdout) as Array<{ title: string }>)[0]!.title).toBe(TITLE)
  }, 30_000)
})
