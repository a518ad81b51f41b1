import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { TaskSummary } from "../../src/api/resources.js"
import { BadGateway, BadRequest, ServiceUnavailable } from "../../src/api/errors.js"
import { client, expectError, raw, withGateway } from "../support/gateway.js"
import {
  ACME,
  ACME_UK,
  ACME_US,
  COMPLETED_TASK,
  EXPENSE_TASK,
  GLOBEX_US,
  LEGACY_TASK,
  MISSING
} from "../support/world.js"

describe("GET /v1/entities", () => {
  it.effect("lists every entity of this tenant and none of another", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const api = yield* client
        const entities = yield* api.entities.listEntities()
        expect(entities.map((e) => e.id).sort()).toEqual([ACME_UK, ACME_US].sort())
        expect(entities.find((e) => e.id === ACME_US)).toEqual({ id: ACME_US, tenantId: ACME, slug: "acme-us", name: "Acme US Inc." })
      })
    ))

  it.effect("resolves the tenant once and caches it", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const api = yield* client
        yield* api.entities.listEntities()
        yield* api.entities.listEntities()
        yield* api.entities.listWorkflows({ params: { entityId: ACME_US } })
        expect(ws.calls.get("resolveTenant")).toBe(1)
      })
    ))

  it.effect("maps upstream trouble to 502/503/504 in the error shape", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        ws.faults.all = () => new BadGateway({ message: "workspace answered 500" })
        expectError(yield* raw("GET", "/v1/entities"), 502, "Bad Gateway", "workspace answered 500")
      })
    ))
})

describe("GET /v1/entities/:entityId/tasks", () => {
  it.effect("lists the entity's tasks with awaiting from the next step", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const api = yield* client
        const tasks = yield* api.entities.listTasks({ params: { entityId: ACME_US }, query: {} })
        const byId = new Map(tasks.map((t) => [t.id, t]))
        expect(byId.size).toBe(3)
        expect(byId.get(EXPENSE_TASK)).toEqual({
          id: EXPENSE_TASK,
          title: "Expense review 2026-10",
          status: "IN_PROGRESS",
          priority: "HIGH",
          awaiting: "TABLE_REVIEW",
          entityId: ACME_US,
          workflowId: "expense-review",
          createdAt: "2026-11-01T09:00:00Z"
        })
        // Terminal: no awaiting; runbook missing: the failed lookup drops awaiting.
        expect(byId.get(COMPLETED_TASK)).not.toHaveProperty("awaiting")
        expect(byId.get(LEGACY_TASK)).not.toHaveProperty("awaiting")
      })
    ))

  it.effect("the raw answer is JSON with exactly the schema's fields (it is written without a schema encode)", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const res = yield* raw("GET", `/v1/entities/${ACME_US}/tasks`)
        expect(res.status).toBe(200)
        expect(res.headers["content-type"]).toMatch(/^application\/json/)
        // Excess properties are an error here: nothing but TaskSummary's fields may leave.
        const decoded = Schema.decodeUnknownSync(Schema.Array(TaskSummary), { onExcessProperty: "error" })(res.body)
        expect(decoded.length).toBe(3)
        expect(res.body).toEqual(decoded)
      })
    ))

  it.effect("filters and pages in the store (status, awaiting, limit, cursor)", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const first = yield* raw("GET", `/v1/entities/${ACME_US}/tasks?status=IN_PROGRESS&limit=1`)
        expect(first.body.map((t: { id: string }) => t.id)).toEqual([EXPENSE_TASK])
        const cursor = first.headers["x-next-cursor"]!
        const second = yield* raw("GET", `/v1/entities/${ACME_US}/tasks?status=IN_PROGRESS&limit=1&cursor=${cursor}`)
        expect(second.body.map((t: { id: string }) => t.id)).toEqual([LEGACY_TASK])
        expect(second.headers["x-next-cursor"]).toBeUndefined()
        const awaiting = yield* raw("GET", `/v1/entities/${ACME_US}/tasks?awaiting=TABLE_REVIEW`)
        expect(awaiting.body.map((t: { id: string }) => t.id)).toEqual([EXPENSE_TASK])
        expect(awaiting.headers["x-next-cursor"]).toBeUndefined()
        expect((yield* raw("GET", `/v1/entities/${ACME_US}/tasks?awaiting=TABLE_REVIEW&status=COMPLETED`)).body).toEqual([])
        // Another entity's task is no cursor of this list.
        const other = (yield* ws.tasks).find((t) => t.entityId !== ACME_US)!
        const foreign = Buffer.from(`t:${other.id}`).toString("base64url")
        expectError(yield* raw("GET", `/v1/entities/${ACME_US}/tasks?cursor=${foreign}`), 400, "Bad Request", /^cursor: /)
      })
    ))

  it.effect("skips the next-step lookup for COMPLETED and FAILED tasks", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        yield* ws.setTask(EXPENSE_TASK, { status: "FAILED", currentStep: null })
        const looked: Array<string> = []
        ws.faults.nextStep = (taskId) => void looked.push(taskId) as undefined
        const api = yield* client
        const tasks = yield* api.entities.listTasks({ params: { entityId: ACME_US }, query: {} })
        expect(tasks.length).toBe(3)
        expect(looked).toEqual([LEGACY_TASK])
      })
    ))

  it.effect("a failed lookup drops awaiting for that task only", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        ws.faults.nextStep = (taskId) => taskId === EXPENSE_TASK ? new ServiceUnavailable({ message: "down" }) : undefined
        yield* ws.setTask(LEGACY_TASK, { workflowId: "expense-review", currentStep: "upload_receipts" })
        const api = yield* client
        const tasks = yield* api.entities.listTasks({ params: { entityId: ACME_US }, query: {} })
        expect(tasks.find((t) => t.id === EXPENSE_TASK)).not.toHaveProperty("awaiting")
        expect(tasks.find((t) => t.id === LEGACY_TASK)?.awaiting).toBe("FILE_UPLOAD")
      })
    ))

  it.effect("asks for every next step of the page in one upstream call", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        for (let i = 0; i < 10; i++) {
          yield* ws.copyTask(EXPENSE_TASK, `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`)
        }
        const api = yield* client
        const tasks = yield* api.entities.listTasks({ params: { entityId: ACME_US }, query: {} })
        expect(tasks.length).toBe(13)
        expect(tasks.filter((t) => t.awaiting === "TABLE_REVIEW").length).toBe(11)
        expect(ws.calls.get("getNextSteps")).toBe(1)
        expect(ws.calls.get("getNextStep")).toBeUndefined()
      })
    ))

  it.effect("a failed batch call still lists every task, without awaiting", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const original = ws.getNextSteps
        ;(ws as any).getNextSteps = () => Effect.fail(new ServiceUnavailable({ message: "down" }))
        const api = yield* client
        const tasks = yield* api.entities.listTasks({ params: { entityId: ACME_US }, query: {} })
        ;(ws as any).getNextSteps = original
        expect(tasks.length).toBe(3)
        expect(tasks.some((t) => "awaiting" in t)).toBe(false)
      })
    ))

  it.effect("another tenant's entity answers 404 exactly like a missing one", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const foreign = yield* raw("GET", `/v1/entities/${GLOBEX_US}/tasks`)
        const missing = yield* raw("GET", `/v1/entities/${MISSING}/tasks`)
        expectError(foreign, 404, "Not Found")
        expect(foreign.body.message.replace(GLOBEX_US, "")).toBe(missing.body.message.replace(MISSING, ""))
      })
    ))
})

describe("GET /v1/entities/:entityId/workflows", () => {
  it.effect("the tenant's workflows plus the global ones, with startParams", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const api = yield* client
        const workflows = yield* api.entities.listWorkflows({ params: { entityId: ACME_US } })
        expect(workflows.map((w) => w.id).sort()).toEqual(["bank-reconciliation", "expense-review", "legacy-import"])
        const expense = workflows.find((w) => w.id === "expense-review")!
        expect(expense.startParams).toEqual([
          { key: "period", type: "string", pattern: "^\\d{4}-(0[1-9]|1[0-2])$", description: "Accounting period, YYYY-MM", required: true },
          { key: "threshold", type: "number", default: 75, description: "Flag expenses above this amount", required: false },
          { key: "currency", type: "string", enum: ["USD", "EUR", "GBP"], default: "USD", required: false }
        ])
        // The runbook lookup fails for legacy-import: listed, without startParams.
        expect(workflows.find((w) => w.id === "legacy-import")).toEqual({ id: "legacy-import", name: "Legacy import" })
      })
    ))

  it.effect("omits startParams only for the workflow whose runbook lookup failed, looking them up in parallel", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        ws.faults.runbook = (id) => id === "expense-review" ? new ServiceUnavailable({ message: "x" }) : undefined
        const api = yield* client
        const workflows = yield* api.entities.listWorkflows({ params: { entityId: ACME_US } })
        expect(workflows.find((w) => w.id === "expense-review")).not.toHaveProperty("startParams")
        expect(workflows.find((w) => w.id === "bank-reconciliation")?.startParams?.map((p) => p.key)).toEqual(["accountId", "autoMatch"])
      })
    ))

  it.effect("404 for another tenant's entity", () =>
    withGateway(() =>
      Effect.gen(function*() {
        expectError(yield* raw("GET", `/v1/entities/${GLOBEX_US}/workflows`), 404, "Not Found")
      })
    ))
})

describe("POST /v1/entities/:entityId/tasks", () => {
  it.effect("creates a task from a listed workflow with a valid context", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const res = yield* raw("POST", `/v1/entities/${ACME_US}/tasks`, {
          workflowId: "expense-review",
          context: { period: "2026-11", threshold: 100 }
        })
        expect(res.status).toBe(201)
        expect(res.body).toMatchObject({ entityId: ACME_US, workflowId: "expense-review", status: "IN_PROGRESS" })
        expect((yield* ws.task(res.body.id))?.tenantId).toBe(ACME)
      })
    ))

  it.effect("only a workflowId from the list: another tenant's workflow or an unknown one is a 400", () =>
    withGateway(() =>
      Effect.gen(function*() {
        expectError(yield* raw("POST", `/v1/entities/${ACME_US}/tasks`, { workflowId: "payroll-check" }), 400, "Bad Request", "workflowId")
        expectError(yield* raw("POST", `/v1/entities/${ACME_US}/tasks`, { workflowId: "nope" }), 400, "Bad Request", "workflowId")
      })
    ))

  it.effect("checks context against startParams, naming the key", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const post = (context: unknown) => raw("POST", `/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context })
        expectError(yield* post({}), 400, "Bad Request", "context.period: is required")
        expectError(yield* post({ period: 202611 }), 400, "Bad Request", "context.period: must be of type string")
        expectError(yield* post({ period: "2026-13" }), 400, "Bad Request", "context.period: must match the pattern")
        expectError(yield* post({ period: "2026-11", currency: "JPY" }), 400, "Bad Request", "context.currency: must be one of")
        expectError(yield* post({ period: "2026-11", threshold: "high" }), 400, "Bad Request", "context.threshold")
        expectError(yield* post("nope"), 400, "Bad Request", "context")
      })
    ))

  it.effect("a workflow without startParams (runbook lookup failed) forwards any context", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const res = yield* raw("POST", `/v1/entities/${ACME_US}/tasks`, { workflowId: "legacy-import", context: { anything: 1 } })
        expect(res.status).toBe(201)
      })
    ))

  it.effect("the workspace's validation errors come back as 400; a foreign entity as 404", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        ;(ws as any).createTask = () => Effect.fail(new BadRequest({ message: "title: too long (validated upstream)" }))
        expectError(
          yield* raw("POST", `/v1/entities/${ACME_US}/tasks`, { workflowId: "legacy-import" }),
          400,
          "Bad Request",
          "validated upstream"
        )
        expectError(yield* raw("POST", `/v1/entities/${GLOBEX_US}/tasks`, { workflowId: "expense-review" }), 404, "Not Found")
      })
    ))
})
