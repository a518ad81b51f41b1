/**
 * An agent's write binds to the step whose assignment it checked, on the built
 * process with the official MCP client: a task's step 1 is assigned to agent A, step 2 to
 * agent B. A's submit_file checks step 1, then fetches its file from a slow source; meanwhile
 * a person completes step 1 on /v1. When A's bytes arrive, its signal must not complete B's
 * step: the write answers 409 naming the current step and nothing is stored.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { ACME, ACME_US } from "../support/world.js"
import { AGENT_A, AGENT_B, call, connect, KEY_A, KEY_B, type McpProcess, mcpFixture, ok, startMcpProcess, toolError } from "./world.js"

/** relay: collect (A) → compile (B) → sign_off (nobody). */
const TASK_INGEST = "e1000000-0000-4000-8000-0000000000e1"
const TASK_OUTPUT = "e2000000-0000-4000-8000-0000000000e2"

const relayFixture = () => {
  const base = mcpFixture()
  return {
    ...base,
    workflows: [...base.workflows, {
      id: "relay",
      name: "Relay",
      tenantId: ACME,
      runbook: {
        configSchema: { global: { type: "object", properties: {} } },
        steps: [
          { id: "collect", title: "Collect", displayHint: { component: "FILE_UPLOAD", config: {} }, args: { source: "relay_in" }, agentId: AGENT_A },
          { id: "compile", title: "Compile", displayHint: { component: "FILE_UPLOAD", config: {} }, args: { source: "relay_out" }, agentId: AGENT_B },
          { id: "sign_off", title: "Sign off", displayHint: { component: "APPROVAL", config: {} }, args: {} }
        ]
      }
    }],
    tasks: [
      ...base.tasks,
      ...[TASK_INGEST, TASK_OUTPUT].map((id) => ({
        id,
        tenantId: ACME,
        entityId: ACME_US,
        workflowId: "relay",
        title: `Relay ${id.slice(0, 2)}`,
        status: "IN_PROGRESS",
        priority: "HIGH",
        createdAt: "2026-11-10T09:00:00.000Z",
        currentStep: "collect"
      }))
    ]
  }
}

/** A file source that answers only when released: the window between A's check and its commit. */
const slowSource = () => {
  let release: () => void = () => {}
  const released = new Promise<void>((r) => (release = r))
  let requested: () => void = () => {}
  const arrived = new Promise<void>((r) => (requested = r))
  const server: Server = createServer((_req, res) => {
    requested()
    void released.then(() => {
      res.writeHead(200, { "content-type": "text/plain" })
      res.end("collected figures\n")
    })
  })
  return { server, release, arrived }
}

let gw: McpProcess
let a: Client
let b: Client
let source: ReturnType<typeof slowSource>
let sourceUrl = ""

const stepOf = async (taskId: string) => {
  const ui = await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)
  expect(ui.status).toBe(200)
  return { current: ui.body.step?.id ?? null, steps: ui.body.steps as Array<{ id: string; status: string }> }
}

/** A person completes the current FILE_UPLOAD step on /v1 (humans are not bound by assignment). */
const personSubmits = async (taskId: string) => {
  const res = await http("POST", `${gw.url}/v1/tasks/${taskId}/files`, {
    source: "relay_in",
    fileName: "by-hand.txt",
    data: Buffer.from("by hand").toString("base64"),
    signalTaskId: taskId,
    signalName: "file_submitted"
  })
  expect(res.status).toBe(201)
  // The signal is delivered after the commit: wait until the task has moved on.
  for (let i = 0; i < 100 && (await stepOf(taskId)).current !== "compile"; i++) await new Promise((r) => setTimeout(r, 50))
  expect((await stepOf(taskId)).current).toBe("compile")
}

beforeAll(async () => {
  source = slowSource()
  await new Promise<void>((r) => source.server.listen(0, "127.0.0.1", r))
  const { port } = source.server.address() as AddressInfo
  sourceUrl = `http://127.0.0.1:${port}/figures.txt`
  gw = await startMcpProcess({ SVC_INGEST_URL_ALLOW: `127.0.0.1:${port}` }, { fixture: relayFixture(), built: true })
  a = await connect(gw.url, KEY_A)
  b = await connect(gw.url, KEY_B)
}, 120_000)

afterAll(async () => {
  await a?.close()
  await b?.close()
  source?.release()
  await new Promise((r) => source?.server.close(r))
  await gw?.cleanup()
})

describe("an agent's write is bound to the step it checked", () => {
  it("submit_file: the task moved on to B's step while A's file was fetched → 409, B's step untouched", async () => {
    const pending = call(a, "submit_file", {
      taskId: TASK_INGEST,
      source: "relay_in",
      fileRef: { provider: "url", url: sourceUrl },
      signalTaskId: TASK_INGEST,
      signalName: "file_submitted"
    })
    await source.arrived // A passed its assignment check on `collect` and is fetching
    await personSubmits(TASK_INGEST)
    source.release()
    const error = toolError(await pending)
    expect(error.statusCode).toBe(409)
    expect(error.message).toBe(`Step "collect" was already completed by a submitted file; the task is at step "compile"`)
    // Give a wrongly recorded signal time to be delivered before looking.
    await new Promise((r) => setTimeout(r, 500))
    const after = await stepOf(TASK_INGEST)
    expect(after.current).toBe("compile")
    expect(after.steps.find((s) => s.id === "compile")?.status).not.toBe("COMPLETED")
    // Nothing of A's write was kept: the document and its signal are one transaction.
    const files = ok(await call(a, "list_files", { taskId: TASK_INGEST, source: "relay_in" })).files as Array<{ filename: string }>
    expect(files.map((f) => f.filename)).toEqual(["by-hand.txt"])
    // B still completes its own step.
    ok(await call(b, "write_output_files", {
      taskId: TASK_INGEST,
      files: [{ filename: "pack.txt", text: "compiled" }],
      signalTaskId: TASK_INGEST,
      signalName: "file_submitted"
    }))
    for (let i = 0; i < 100 && (await stepOf(TASK_INGEST)).current !== "sign_off"; i++) await new Promise((r) => setTimeout(r, 50))
    expect((await stepOf(TASK_INGEST)).current).toBe("sign_off")
  }, 60_000)

  it("write_output_files and submit_file on the step they checked still complete it", async () => {
    ok(await call(a, "write_output_files", {
      taskId: TASK_OUTPUT,
      files: [{ filename: "in.txt", text: "figures" }],
      signalTaskId: TASK_OUTPUT,
      signalName: "file_submitted"
    }))
    for (let i = 0; i < 100 && (await stepOf(TASK_OUTPUT)).current !== "compile"; i++) await new Promise((r) => setTimeout(r, 50))
    expect((await stepOf(TASK_OUTPUT)).current).toBe("compile")
    // A may not take B's step, however it asks.
    expect(toolError(await call(a, "write_output_files", {
      taskId: TASK_OUTPUT,
      files: [{ filename: "sneak.txt", text: "x" }],
      signalTaskId: TASK_OUTPUT,
      signalName: "file_submitted"
    })).statusCode).toBe(403)
    ok(await call(b, "submit_file", {
      taskId: TASK_OUTPUT,
      source: "relay_out",
      fileRef: { provider: "inline_base64", data: Buffer.from("pack").toString("base64") },
      signalTaskId: TASK_OUTPUT,
      signalName: "file_submitted"
    }))
    for (let i = 0; i < 100 && (await stepOf(TASK_OUTPUT)).current !== "sign_off"; i++) await new Promise((r) => setTimeout(r, 50))
    expect((await stepOf(TASK_OUTPUT)).current).toBe("sign_off")
  }, 60_000)
})
