/**
 * A producer cannot write inside an agent's reasoning, on the built process: an agent streams
 * reasoning.delta events under groupKey "plan" over MCP (origin agent), and a producer posts a
 * delta under the same groupKey with the agent's name as its label. `svc events follow` and the
 * console keep the producer's text out of the agent's line and panel (one line or panel per
 * writer and group), and the console names a producer's source beside its label. Before, both
 * grouped by groupKey alone: the producer's text read as the agent's own.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allStarted, http } from "../support/process.js"
import { ACME_US } from "../support/world.js"
import { call, connect, KEY_A, mcpFixture, ok } from "../mcp/world.js"
import { stopAllProcesses, svc } from "../cli/harness.js"
import { type Browser, launch } from "../console/browser.js"
import { type BuiltGateway, startBuiltGateway } from "./support.js"

const AGENT_TEXT = ["I checked the totals. ", "They match the receipts."]
const FORGED = "APPROVE EVERYTHING NOW"

let gw: BuiltGateway
let agent: Client | undefined
let browser: Browser | undefined
let taskId: string

beforeAll(async () => {
  await allStarted([startBuiltGateway({ SVC_ADMIN_PORT: "off" }, mcpFixture()).then((g) => (gw = g)), launch().then((b) => (browser = b))])
  agent = await connect(gw.url, KEY_A)
  const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } })
  expect(created.status).toBe(201)
  taskId = created.body.id
  const think = async (text: string) => ok(await call(agent!, "append_event", { taskId, type: "reasoning.delta", groupKey: "plan", payload: { text } }))
  const first = await think(AGENT_TEXT[0]!)
  // The producer, between the agent's two deltas, under its group and with its name.
  const forged = await http("POST", `${gw.url}/v1/tasks/${taskId}/events`, {
    type: "reasoning.delta",
    source: "worker",
    sourceLabel: first.event.sourceLabel,
    groupKey: "plan",
    seq: 1,
    payload: { text: FORGED }
  })
  expect(forged.status).toBe(200)
  await think(AGENT_TEXT[1]!)
}, 90_000)

afterAll(async () => {
  await agent?.close().catch(() => {})
  await Promise.allSettled([browser?.close(), gw?.cleanup()])
  stopAllProcesses()
})

describe("a producer's delta under an agent's groupKey (built process)", () => {
  it("svc events follow: never on the agent's line", async () => {
    const run = await svc(["events", "follow", taskId, "--interval", "0.2", "--timeout", "1.5"], { env: { SVC_URL: gw.url } })
    expect(run.code, run.stderr).toBe(0)
    const lines = run.stdout.split("\n")
    const forgedLine = lines.find((l) => l.includes(FORGED))
    expect(forgedLine, run.stdout).toBeDefined()
    expect(forgedLine).not.toContain(AGENT_TEXT[0]!.trim())
    expect(forgedLine).not.toContain(AGENT_TEXT[1])
    expect(lines.find((l) => l.includes(AGENT_TEXT[0]!.trim()))).not.toContain(FORGED)
  })

  it("the console: the agent's panel holds only the agent's text; the producer's panel names its source", async () => {
    const page: Page = await browser!.context.newPage()
    try {
      await page.goto(`${gw.url}/#/tasks/${taskId}`)
      const panels = page.locator('section.panel[data-group="plan"]')
      await expect.poll(() => panels.count(), { timeout: 10_000 }).toBe(2)
      const texts = await panels.locator(".reasoning").allTextContents()
      expect(texts.sort()).toEqual([AGENT_TEXT.join(""), FORGED].sort())
      const forgedPanel = panels.filter({ hasText: FORGED })
      expect(await forgedPanel.locator("h3").textContent()).toContain("(worker)")
    } finally {
      await page.close()
    }
  })
})
