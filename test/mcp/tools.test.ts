/**
 * The agent tool server end to end: the official MCP SDK client over Streamable HTTP against
 * the real gateway process (embedded workspace on a temp database, ./world.ts). Every tool's
 * success path and a failure, with messages compared to what /v1 answers for the same input;
 * steps assigned to agents; attribution of every write in the task's timeline; output files
 * downloaded through /v1 byte for byte.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { ACME_US, DOCUMENT, EXPENSE_TASK, GLOBEX_TASK, GLOBEX_US, MISSING } from "../support/world.js"
import {
  AGENT_A,
  AGENT_B,
  call,
  CLOSE_SOURCE,
  connect,
  KEY_A,
  KEY_B,
  type McpProcess,
  ok,
  startMcpProcess,
  TASK_PREPARE,
  TASK_REVIEW,
  toolError
} from "./world.js"

const TOOLS = [
  "list_assigned_steps",
  "list_inbox",
  "list_entities",
  "list_workflows",
  "list_tasks",
  "start_task",
  "get_task",
  "list_events",
  "append_event",
  "list_files",
  "read_file",
  "submit_file",
  "ingest_data",
  "write_output_files",
  "decide_step"
]

const READ_MAX = 200

// ajv-formats is CommonJS: its default export is the function, or carries it.
const addFormats: (ajv: Ajv2020) => Ajv2020 =
  (addFormatsModule as unknown as { default?: (ajv: Ajv2020) => Ajv2020 }).default ??
    (addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020)

let gw: McpProcess
let a: Client
let b: Client

/** What /v1 answers for the same request: the message a tool error must carry. */
const v1Message = async (method: string, path: string, body?: unknown) => {
  const res = await http(method, gw.url + path, body)
  expect(res.status).toBeGreaterThanOrEqual(400)
  return res.body.message as string
}

const agentActions = async (taskId: string) =>
  (await http("GET", `${gw.url}/v1/tasks/${taskId}/events`)).body.events.filter((e: any) => e.type === "agent.action")

beforeAll(async () => {
  gw = await startMcpProcess({ SVC_MCP_READ_MAX_BYTES: String(READ_MAX), SVC_MCP_AUTH_FAILURE_BURST: "100" })
  a = await connect(gw.url, KEY_A)
  b = await connect(gw.url, KEY_B)
}, 60_000)

afterAll(async () => {
  await a?.close()
  await b?.close()
  await gw?.cleanup()
})

describe("MCP handshake", () => {
  it("initializes: server info, the tools capability and instructions", () => {
    expect(a.getServerVersion()).toEqual({ name: "tenant-gateway", version: expect.any(String) })
    expect(a.getServerCapabilities()?.tools).toBeDefined()
    expect(a.getInstructions()).toMatch(/list_assigned_steps/)
  })

  it("lists every tool, each with a title, a description, and input and output schemas that compile", async () => {
    const { tools } = await a.listTools()
    expect(tools.map((t) => t.name)).toEqual(TOOLS)
    const ajv = addFormats(new Ajv2020({ strict: false }))
    for (const t of tools) {
      expect(t.description, t.name).toMatch(/\w{3,}/)
      expect(t.title, t.name).toBeTruthy()
      expect(t.inputSchema.type, t.name).toBe("object")
      expect(t.outputSchema?.type, t.name).toBe("object")
      expect(() => ajv.compile(t.inputSchema), t.name).not.toThrow()
      expect(() => ajv.compile(t.outputSchema!), t.name).not.toThrow()
      expect(t.annotations?.readOnlyHint, t.name).toBe(t.name.startsWith("list_") || t.name.startsWith("get_") || t.name === "read_file")
    }
  })

  it("the write tools take the /v1 DTOs: submit_file is the ingest DTO plus taskId, closed", async () => {
    const { tools } = await a.listTools()
    const submit = tools.find((t) => t.name === "submit_file")!.inputSchema as any
    expect(Object.keys(submit.properties).sort()).toEqual(
      ["contentType", "fileName", "fileRef", "period", "schemaSlug", "signalName", "signalTaskId", "source", "taskId"]
    )
    expect(submit.required.sort()).toEqual(["fileRef", "source", "taskId"])
    expect(submit.additionalProperties).toBe(false)
    expect(submit.dependentRequired).toEqual({ signalTaskId: ["signalName"], signalName: ["signalTaskId"] })
    const append = tools.find((t) => t.name === "append_event")!.inputSchema as any
    expect(append.properties.source).toBeUndefined()
    expect(append.required.sort()).toEqual(["payload", "taskId", "type"])
  })

  it("an unknown tool is a protocol error (invalid params)", async () => {
    await expect(call(a, "no_such_tool")).rejects.toThrow(/-32602|Unknown tool/)
  })
})

describe("steps assigned to agents: the work queue", () => {
  it("list_assigned_steps lists the current steps assigned to the caller, and nobody else's", async () => {
    const mine = ok(await call(a, "list_assigned_steps")).steps
    expect(mine.map((s: any) => [s.taskId, s.stepId]).sort()).toEqual([[TASK_PREPARE, "prepare"], [TASK_REVIEW, "review"]])
    expect(mine.find((s: any) => s.taskId === TASK_PREPARE)).toEqual({
      taskId: TASK_PREPARE,
      taskTitle: "Close prepare",
      entityId: ACME_US,
      workflowId: "agent-close",
      stepId: "prepare",
      stepTitle: "Prepare the close pack",
      component: "FILE_UPLOAD"
    })
    expect(ok(await call(b, "list_assigned_steps")).steps).toEqual([])
    expect(toolError(await call(a, "list_assigned_steps", { all: true })).message).toMatch(/^all: is unexpected/)
  })

  it("list_assigned_steps pages with limit and cursor, to the same steps", async () => {
    const all = ok(await call(a, "list_assigned_steps")).steps
    expect(ok(await call(a, "list_assigned_steps")).nextCursor).toBeUndefined()
    const seen: Array<unknown> = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = ok(await call(a, "list_assigned_steps", { limit: 1, ...(cursor !== undefined ? { cursor } : {}) }))
      expect(page.steps.length).toBeLessThanOrEqual(1)
      seen.push(...page.steps)
      cursor = page.nextCursor
      pages++
    } while (cursor !== undefined && pages < 10)
    expect(cursor).toBeUndefined()
    expect(seen).toEqual(all)
    expect(toolError(await call(a, "list_assigned_steps", { cursor: "nope" })).message).toMatch(/^cursor: /)
    expect(toolError(await call(a, "list_assigned_steps", { limit: 0 })).message).toMatch(/^limit: /)
  })

  it("list_inbox bounds assignee and workflowId in characters (code points), as GET /v1/inbox does", async () => {
    // Before: 256 emoji (512 UTF-16 units) were refused by the tool's own schema.
    expect(ok(await call(a, "list_inbox", { assignee: "😀".repeat(256), workflowId: "😀".repeat(256) })).items).toEqual([])
    const over = "😀".repeat(257)
    expect(toolError(await call(a, "list_inbox", { assignee: over })).message)
      .toBe(await v1Message("GET", `/v1/inbox?assignee=${encodeURIComponent(over)}`))
  })

  it("list_tasks takes the /v1 filters and paging", async () => {
    const v1 = (await http("GET", `${gw.url}/v1/entities/${ACME_US}/tasks?status=IN_PROGRESS&awaiting=FILE_UPLOAD`)).body
    const listed = ok(await call(a, "list_tasks", { entityId: ACME_US, status: "IN_PROGRESS", awaiting: "FILE_UPLOAD" }))
    expect(listed).toEqual({ tasks: v1 })
    expect(v1.length).toBeGreaterThan(0)
    const running = (await http("GET", `${gw.url}/v1/entities/${ACME_US}/tasks?status=IN_PROGRESS`)).body
    expect(running.length).toBeGreaterThan(1)
    const first = ok(await call(a, "list_tasks", { entityId: ACME_US, status: "IN_PROGRESS", limit: 1 }))
    expect(first.tasks).toEqual(running.slice(0, 1))
    const second = ok(await call(a, "list_tasks", { entityId: ACME_US, status: "IN_PROGRESS", limit: 1, cursor: first.nextCursor }))
    expect(second.tasks).toEqual(running.slice(1, 2))
    expect(toolError(await call(a, "list_tasks", { entityId: ACME_US, status: "DONE" })).message).toMatch(/^status: /)
  })

  it("get_task is the /v1 UI state plus the assignment (yours or not)", async () => {
    const ui = (await http("GET", `${gw.url}/v1/tasks/${TASK_PREPARE}/ui`)).body
    const forA = ok(await call(a, "get_task", { taskId: TASK_PREPARE }))
    expect(forA).toEqual({ ...ui, assignment: { stepId: "prepare", agentId: AGENT_A, assignedToYou: true } })
    // The FILE_UPLOAD step names the ingest path and its signal.
    expect(forA.step.args.actions[0]).toMatchObject({ type: "submit_file", source: CLOSE_SOURCE, signalName: "file_submitted" })
    expect(ok(await call(b, "get_task", { taskId: TASK_PREPARE })).assignment).toEqual({
      stepId: "prepare",
      agentId: AGENT_A,
      assignedToYou: false
    })
    expect(ok(await call(a, "get_task", { taskId: EXPENSE_TASK })).assignment).toBeNull()
  })

  it("get_task of a missing or another tenant's task fails as /v1 does (404)", async () => {
    for (const taskId of [MISSING, GLOBEX_TASK]) {
      const error = toolError(await call(a, "get_task", { taskId }))
      expect(error).toEqual({ message: await v1Message("GET", `/v1/tasks/${taskId}/ui`), statusCode: 404 })
    }
    const bad = toolError(await call(a, "get_task", { taskId: "not-a-task" }))
    expect(bad).toEqual({ message: await v1Message("GET", "/v1/tasks/not-a-task/ui"), statusCode: 400 })
  })
})

describe("reading", () => {
  it("list_entities answers what GET /v1/entities does", async () => {
    expect(ok(await call(a, "list_entities"))).toEqual({ entities: (await http("GET", `${gw.url}/v1/entities`)).body })
  })

  it("list_workflows and list_tasks answer what /v1 does; another tenant's entity is a 404, a bad id a 400", async () => {
    expect(ok(await call(a, "list_workflows", { entityId: ACME_US }))).toEqual({
      workflows: (await http("GET", `${gw.url}/v1/entities/${ACME_US}/workflows`)).body
    })
    expect(ok(await call(a, "list_tasks", { entityId: ACME_US }))).toEqual({
      tasks: (await http("GET", `${gw.url}/v1/entities/${ACME_US}/tasks`)).body
    })
    expect(toolError(await call(a, "list_workflows", { entityId: GLOBEX_US }))).toEqual({
      message: await v1Message("GET", `/v1/entities/${GLOBEX_US}/workflows`),
      statusCode: 404
    })
    expect(toolError(await call(a, "list_tasks", { entityId: "nope" }))).toEqual({
      message: await v1Message("GET", "/v1/entities/nope/tasks"),
      statusCode: 400
    })
  })

  it("list_events answers the timeline; another tenant's task is a 404", async () => {
    expect(ok(await call(a, "list_events", { taskId: EXPENSE_TASK }))).toEqual(
      (await http("GET", `${gw.url}/v1/tasks/${EXPENSE_TASK}/events`)).body
    )
    expect(toolError(await call(a, "list_events", { taskId: GLOBEX_TASK })).message).toBe(
      await v1Message("GET", `/v1/tasks/${GLOBEX_TASK}/events`)
    )
  })

  it("list_events reads only what is new with after (a position) and limit, like GET /events?after=&limit=", async () => {
    for (const seq of [9000, 9001]) {
      const extra = await http("POST", `${gw.url}/v1/tasks/${EXPENSE_TASK}/events`, { type: "note", source: "worker", seq, payload: {} })
      expect(extra.status).toBe(200)
    }
    const all = (await http("GET", `${gw.url}/v1/tasks/${EXPENSE_TASK}/events`)).body.events as Array<{ position: string }>
    expect(all.length).toBeGreaterThan(2)
    const first = all[0]!.position
    const page = ok(await call(a, "list_events", { taskId: EXPENSE_TASK, after: first, limit: 1 }))
    expect(page).toEqual((await http("GET", `${gw.url}/v1/tasks/${EXPENSE_TASK}/events?after=${first}&limit=1`)).body)
    expect(page.events.map((e: { position: string }) => e.position)).toEqual([all[1]!.position])
    // It stopped before the end: it says so, and where to read on.
    expect(page).toMatchObject({ hasMore: true, nextAfter: all[1]!.position })
    const next = ok(await call(a, "list_events", { taskId: EXPENSE_TASK, after: page.nextAfter, limit: 1 }))
    expect(next.events.map((e: { position: string }) => e.position)).toEqual([all[2]!.position])
    expect(toolError(await call(a, "list_events", { taskId: EXPENSE_TASK, limit: 0 })).statusCode).toBe(400)
    expect(toolError(await call(a, "list_events", { taskId: EXPENSE_TASK, after: "1.5" })).statusCode).toBe(400)
    // The old seq cursor is gone: an unknown input.
    expect(toolError(await call(a, "list_events", { taskId: EXPENSE_TASK, afterSeq: 0 })).statusCode).toBe(400)
  })

  it("list_files answers the file list; an empty source is a 400", async () => {
    expect(ok(await call(a, "list_files", { taskId: EXPENSE_TASK }))).toEqual({
      files: (await http("GET", `${gw.url}/v1/tasks/${EXPENSE_TASK}/files`)).body
    })
    expect(toolError(await call(a, "list_files", { taskId: EXPENSE_TASK, source: "" })).statusCode).toBe(400)
  })

  it("read_file returns a text document as text; a missing one is a 404; one over the cap is refused naming its URL", async () => {
    const download = await fetch(`${gw.url}/v1/tasks/${EXPENSE_TASK}/files/${DOCUMENT}/download`)
    const text = await download.text()
    const result = await call(a, "read_file", { taskId: EXPENSE_TASK, documentRef: DOCUMENT })
    expect(result.content).toEqual([{ type: "text", text }])
    expect(ok(result)).toEqual({
      document: {
        documentRef: DOCUMENT,
        filename: "receipt-001.txt",
        contentType: download.headers.get("content-type"),
        sizeBytes: Buffer.byteLength(text),
        downloadUrl: `/v1/tasks/${EXPENSE_TASK}/files/${DOCUMENT}/download`
      },
      encoding: "text"
    })
    expect(toolError(await call(a, "read_file", { taskId: EXPENSE_TASK, documentRef: MISSING }))).toEqual({
      message: await v1Message("GET", `/v1/tasks/${EXPENSE_TASK}/files/${MISSING}/download`),
      statusCode: 404
    })
    const big = ok(await call(a, "write_output_files", {
      taskId: EXPENSE_TASK,
      files: [{ filename: "big.txt", text: "x".repeat(READ_MAX + 1) }]
    })).output_files[0].document_ref
    const refused = toolError(await call(a, "read_file", { taskId: EXPENSE_TASK, documentRef: big }))
    expect(refused.statusCode).toBe(413)
    expect(refused.message).toContain(`/v1/tasks/${EXPENSE_TASK}/files/${big}/download`)
  })
})

describe("writing, attributed to the agent", () => {
  it("start_task starts a run like POST /v1/entities/:id/tasks and records who started it", async () => {
    const { task } = ok(await call(a, "start_task", { entityId: ACME_US, workflowId: "expense-review", context: { period: "2026-11" } }))
    expect(task).toMatchObject({ title: "Expense review 2026-11", status: "IN_PROGRESS", workflowId: "expense-review" })
    const [action] = await agentActions(task.id)
    expect(action).toMatchObject({
      source: `agent:${AGENT_A}`,
      sourceLabel: "Agent A",
      payload: { tool: "start_task", agentId: AGENT_A, workflowId: "expense-review" }
    })
    const body = { workflowId: "expense-review", context: { period: "2026-13" } }
    expect(toolError(await call(a, "start_task", { entityId: ACME_US, ...body }))).toEqual({
      message: await v1Message("POST", `/v1/entities/${ACME_US}/tasks`, body),
      statusCode: 400
    })
  })

  it("append_event: the source is the agent, its seqs its own; without seq the next of its own, concurrently too; a taken seq is a 409", async () => {
    const before = (await http("GET", `${gw.url}/v1/tasks/${EXPENSE_TASK}/events`)).body.events
    // The agent's own seq space: its own events only (origin agent), from 0; the gateway's records of it take none.
    const nextOf = (agentId: string) =>
      Math.max(-1, ...before.filter((e: any) => e.source === `agent:${agentId}` && e.origin === "agent").map((e: any) => e.seq)) + 1
    const next = nextOf(AGENT_A)
    const nextB = nextOf(AGENT_B)
    const first = ok(await call(a, "append_event", {
      taskId: EXPENSE_TASK,
      type: "reasoning.delta",
      payload: { text: "Looking at the receipts" },
      groupKey: "thread-1"
    }))
    expect(first).toEqual({
      ok: true,
      event: expect.objectContaining({
        taskId: EXPENSE_TASK,
        seq: next,
        origin: "agent",
        source: `agent:${AGENT_A}`,
        sourceLabel: "Agent A",
        groupKey: "thread-1",
        payload: { text: "Looking at the receipts" }
      })
    })
    const parallel = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        call(i % 2 === 0 ? a : b, "append_event", { taskId: EXPENSE_TASK, type: "reasoning.delta", payload: { i } }))
    )
    const seqsOf = (agentId: string) =>
      parallel.map((r) => ok(r).event).filter((e: any) => e.source === `agent:${agentId}`).map((e: any) => e.seq).sort((x: number, y: number) => x - y)
    expect(seqsOf(AGENT_A)).toEqual([1, 2, 3, 4].map((i) => next + i))
    expect(seqsOf(AGENT_B)).toEqual([0, 1, 2, 3].map((i) => nextB + i))
    expect(ok(parallel[1]!).event.source).toBe(`agent:${AGENT_B}`)
    // The caller does not choose the source.
    expect(toolError(await call(a, "append_event", { taskId: EXPENSE_TASK, type: "x", payload: {}, source: "worker" })).statusCode)
      .toBe(400)
    // The identical event at its seq again is the stored one; a different one there is a 409 in /v1's words.
    const again = ok(await call(a, "append_event", {
      taskId: EXPENSE_TASK,
      type: "reasoning.delta",
      seq: next,
      payload: { text: "Looking at the receipts" },
      groupKey: "thread-1"
    }))
    expect(again.event).toEqual(first.event)
    const workerSeq = 700_000 + next
    const taken = { type: "reasoning.delta", source: "worker", sourceLabel: "Agent A", seq: workerSeq, payload: { other: 1 } }
    expect((await http("POST", `${gw.url}/v1/tasks/${EXPENSE_TASK}/events`, { ...taken, payload: { mine: 1 } })).status).toBe(200)
    const v1 = await v1Message("POST", `/v1/tasks/${EXPENSE_TASK}/events`, taken)
    expect(v1).toBe(`seq ${workerSeq} of source "worker" is already taken by a different event`)
    expect(toolError(await call(a, "append_event", { taskId: EXPENSE_TASK, type: "reasoning.delta", seq: next, payload: { other: 1 } })))
      .toEqual({ message: v1.replace(`seq ${workerSeq}`, `seq ${next}`).replace(`"worker"`, `"agent:${AGENT_A}"`), statusCode: 409 })
    // Another source's seq is not the agent's: the worker's seq is free for agent A, and for agent B after A.
    expect(ok(await call(a, "append_event", { taskId: EXPENSE_TASK, type: "x", seq: workerSeq, payload: {} })).event)
      .toMatchObject({ seq: workerSeq, source: `agent:${AGENT_A}`, origin: "agent" })
    expect(ok(await call(b, "append_event", { taskId: EXPENSE_TASK, type: "x", seq: workerSeq, payload: {} })).event)
      .toMatchObject({ seq: workerSeq, source: `agent:${AGENT_B}`, origin: "agent" })
    // Nor may a client forge the gateway's own sources.
    for (const source of [`agent:${AGENT_A}`, "audit", "workspace"]) {
      const forged = await http("POST", `${gw.url}/v1/tasks/${EXPENSE_TASK}/events`, { ...taken, source, seq: workerSeq + 100 })
      expect(forged.status, source).toBe(400)
      expect(forged.body.message).toMatch(/written by the gateway only/)
    }
  })

  it("submit_file ingests by reference like POST /v1/.../files/ingest, and records it", async () => {
    const bytes = Buffer.from("Coffee 4.50 USD\n")
    const result = ok(await call(a, "submit_file", {
      taskId: EXPENSE_TASK,
      source: "receipts",
      fileName: "coffee.txt",
      fileRef: { provider: "inline_base64", data: bytes.toString("base64") }
    }))
    expect(result).toMatchObject({ taskId: EXPENSE_TASK, source: "receipts", filename: "coffee.txt", sizeBytes: bytes.length, signaled: false })
    const download = await fetch(gw.url + result.downloadUrl)
    expect(Buffer.from(await download.arrayBuffer())).toEqual(bytes)
    expect((await agentActions(EXPENSE_TASK)).map((e: any) => e.payload)).toContainEqual(
      expect.objectContaining({ tool: "submit_file", documentRef: result.documentRef, filename: "coffee.txt" })
    )
    const bad = { source: "receipts", fileRef: { provider: "ftp", path: "/x" } }
    expect(toolError(await call(a, "submit_file", { taskId: EXPENSE_TASK, ...bad }))).toEqual({
      message: await v1Message("POST", `/v1/tasks/${EXPENSE_TASK}/files/ingest`, bad),
      statusCode: 400
    })
  })

  it("ingest_data stores records like POST /v1/.../data/ingest; both data and events is a 400", async () => {
    const { results } = ok(await call(a, "ingest_data", { taskId: EXPENSE_TASK, events: [{ data: { amount: 1 } }, { data: { amount: 2 } }], kind: "expense" }))
    expect(results).toEqual([
      { id: expect.any(String), status: "accepted", signaled: false },
      { id: expect.any(String), status: "accepted", signaled: false }
    ])
    expect((await agentActions(EXPENSE_TASK)).map((e: any) => e.payload)).toContainEqual(
      expect.objectContaining({ tool: "ingest_data", records: 2, kind: "expense" })
    )
    const both = { data: { a: 1 }, events: [{ data: { a: 1 } }] }
    expect(toolError(await call(a, "ingest_data", { taskId: EXPENSE_TASK, ...both }))).toEqual({
      message: await v1Message("POST", `/v1/tasks/${EXPENSE_TASK}/data/ingest`, both),
      statusCode: 400
    })
  })
})

describe("output files and the assigned FILE_UPLOAD step", () => {
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0xff, 0x00])
  const report = "Close pack: all accounts reconciled.\nÜbersicht ✓\n"
  const signal = { signalTaskId: TASK_PREPARE, signalName: "file_submitted" }

  it("another agent cannot complete the step: refused before anything is stored", async () => {
    const before = (await http("GET", `${gw.url}/v1/tasks/${TASK_PREPARE}/files`)).body
    const refused = toolError(await call(b, "write_output_files", {
      taskId: TASK_PREPARE,
      files: [{ filename: "mine.txt", text: "not yours" }],
      ...signal
    }))
    expect(refused.statusCode).toBe(403)
    expect(refused.message).toBe(`Step "prepare" of task ${TASK_PREPARE} is assigned to agent ${AGENT_A}; agent ${AGENT_B} cannot complete it`)
    expect(toolError(await call(b, "submit_file", {
      taskId: TASK_PREPARE,
      source: CLOSE_SOURCE,
      fileRef: { provider: "inline_base64", data: "eA==" },
      ...signal
    })).statusCode).toBe(403)
    expect((await http("GET", `${gw.url}/v1/tasks/${TASK_PREPARE}/files`)).body).toEqual(before)
    expect(ok(await call(a, "get_task", { taskId: TASK_PREPARE })).step.id).toBe("prepare")
  })

  it("a malformed file is a 400 naming it, nothing stored", async () => {
    expect(toolError(await call(a, "write_output_files", {
      taskId: TASK_PREPARE,
      files: [{ filename: "a.txt", text: "x", dataBase64: "eA==" }]
    }))).toEqual({ message: "files.0.text: exactly one of text / dataBase64 must be set", statusCode: 400 })
    expect(toolError(await call(a, "write_output_files", {
      taskId: TASK_PREPARE,
      files: [{ filename: "ok.txt", text: "fine" }, { filename: "bad.bin", dataBase64: "not base64!" }]
    })).message).toMatch(/^files\[1\]\.dataBase64: /)
    expect(toolError(await call(a, "write_output_files", { taskId: TASK_PREPARE, files: [{ filename: "../x", text: "x" }] })).statusCode)
      .toBe(400)
    expect((await http("GET", `${gw.url}/v1/tasks/${TASK_PREPARE}/files`)).body).toEqual([])
  })

  it("write_output_files stores agent_output:<uuid> documents, downloadable through /v1 byte for byte, and completes the step", async () => {
    const { output_files } = ok(await call(a, "write_output_files", {
      taskId: TASK_PREPARE,
      files: [
        { filename: "report.md", text: report },
        { filename: "chart.png", dataBase64: png.toString("base64") }
      ],
      ...signal
    }))
    const source = `agent_output:${AGENT_A}`
    expect(output_files).toEqual([
      { document_ref: expect.any(String), filename: "report.md", content_type: "text/markdown", size_bytes: Buffer.byteLength(report), source },
      { document_ref: expect.any(String), filename: "chart.png", content_type: "image/png", size_bytes: png.length, source }
    ])
    for (const [file, bytes] of [[output_files[0], Buffer.from(report)], [output_files[1], png]] as const) {
      const res = await fetch(`${gw.url}/v1/tasks/${TASK_PREPARE}/files/${file.document_ref}/download`)
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toBe(file.content_type)
      expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes)
    }
    const listed = (await http("GET", `${gw.url}/v1/tasks/${TASK_PREPARE}/files?source=${encodeURIComponent(source)}`)).body
    expect(listed.map((f: any) => f.id).sort()).toEqual(output_files.map((f: any) => f.document_ref).sort())
    // The signal followed the last file: the assigned FILE_UPLOAD step is done.
    const ui = (await http("GET", `${gw.url}/v1/tasks/${TASK_PREPARE}/ui`)).body
    expect(ui.steps[0]).toEqual({ id: "prepare", title: "Prepare the close pack", status: "COMPLETED" })
    expect(ui.step.id).toBe("review")
    // read_file: text as text, the image as a blob resource.
    const text = await call(a, "read_file", { taskId: TASK_PREPARE, documentRef: output_files[0].document_ref })
    expect(text.content).toEqual([{ type: "text", text: report }])
    const blob = await call(a, "read_file", { taskId: TASK_PREPARE, documentRef: output_files[1].document_ref })
    expect(ok(blob).encoding).toBe("base64")
    expect(blob.content).toEqual([{
      type: "resource",
      resource: {
        uri: `${gw.url}/v1/tasks/${TASK_PREPARE}/files/${output_files[1].document_ref}/download`,
        mimeType: "image/png",
        blob: png.toString("base64")
      }
    }])
    const [action] = (await agentActions(TASK_PREPARE)).filter((e: any) => e.payload.tool === "write_output_files")
    expect(action).toMatchObject({
      source: `agent:${AGENT_A}`,
      payload: { agentId: AGENT_A, signalName: "file_submitted", files: output_files.map((f: any) => ({ documentRef: f.document_ref, filename: f.filename })) }
    })
  })
})

describe("decide_step on an assigned APPROVAL step", () => {
  it("refused to another agent, completed by its agent, attributed; the unassigned step after it is anyone's", async () => {
    const refused = toolError(await call(b, "decide_step", { taskId: TASK_REVIEW, type: "approved" }))
    expect(refused).toEqual({
      message: `Step "review" of task ${TASK_REVIEW} is assigned to agent ${AGENT_A}; agent ${AGENT_B} cannot complete it`,
      statusCode: 403
    })
    expect(toolError(await call(b, "decide_step", { taskId: TASK_REVIEW, type: "rejected" })).statusCode).toBe(403)
    expect(ok(await call(a, "get_task", { taskId: TASK_REVIEW })).step.id).toBe("review")

    expect(ok(await call(a, "decide_step", { taskId: TASK_REVIEW, type: "approved", comments: "Pack checked" }))).toEqual({ ok: true })
    const after = ok(await call(a, "get_task", { taskId: TASK_REVIEW }))
    expect(after.step.id).toBe("sign_off")
    expect(after.assignment).toBeNull()
    const snapshots = (await http("GET", `${gw.url}/v1/tasks/${TASK_REVIEW}/snapshots`)).body
    expect(snapshots.review).toMatchObject({ decision: "approved", reason: "Pack checked" })
    expect(await agentActions(TASK_REVIEW)).toEqual([
      expect.objectContaining({
        source: `agent:${AGENT_A}`,
        payload: { tool: "decide_step", agentId: AGENT_A, decision: "approved", step: "review", comments: "Pack checked" }
      })
    ])
    // What is left of A's work: the review step TASK_PREPARE moved on to.
    expect(ok(await call(a, "list_assigned_steps")).steps.map((s: any) => [s.taskId, s.stepId])).toEqual([[TASK_PREPARE, "review"]])

    expect(ok(await call(b, "decide_step", { taskId: TASK_REVIEW, type: "approved" }))).toEqual({ ok: true })
    expect(ok(await call(b, "get_task", { taskId: TASK_REVIEW })).task.status).toBe("COMPLETED")
    // A finished task takes no decision: the /v1 answer.
    const body = { type: "approved" }
    expect(toolError(await call(b, "decide_step", { taskId: TASK_REVIEW, ...body }))).toEqual({
      message: await v1Message("POST", `/v1/tasks/${TASK_REVIEW}/action`, body),
      statusCode: 400
    })
  })

  it("a decision named for a step that is no longer current is refused (409)", async () => {
    const { task } = ok(await call(a, "start_task", { entityId: ACME_US, workflowId: "agent-close" }))
    const stale = toolError(await call(a, "decide_step", { taskId: task.id, type: "approved", step: "review" }))
    expect(stale.statusCode).toBe(409)
  })
})

describe("keys stay out of the logs", () => {
  it("no key the tests used appears in the process output", () => {
    for (const key of [KEY_A, KEY_B]) expect(gw.output()).not.toContain(key)
  })
})
