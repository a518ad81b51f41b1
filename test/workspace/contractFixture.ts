/**
 * The world every WorkspaceClient implementation is checked against: two tenants, entities,
 * workflows (a global one, a tenant one, one with no runbook), tasks in each state, subledger
 * rows, documents, events and a GL connection. `contractFixture()` returns a fresh copy.
 */
import type { Fixture } from "../../src/domain/fixture.js"

export const ID = {
  tenantA: "a0000000-0000-4000-8000-000000000001",
  tenantB: "b0000000-0000-4000-8000-000000000001",
  entityA1: "a1000000-0000-4000-8000-000000000001",
  entityA2: "a1000000-0000-4000-8000-000000000002",
  entityB1: "b1000000-0000-4000-8000-000000000001",
  /** close workflow, at its FILE_UPLOAD step. */
  taskUpload: "a2000000-0000-4000-8000-000000000001",
  /** close workflow, at its TABLE_REVIEW step (upload done). */
  taskReview: "a2000000-0000-4000-8000-000000000002",
  /** two-approval workflow, at its first approval. */
  taskApprove: "a2000000-0000-4000-8000-000000000003",
  taskCompleted: "a2000000-0000-4000-8000-000000000004",
  taskFailed: "a2000000-0000-4000-8000-000000000005",
  /** Its workflow has no runbook. */
  taskLegacy: "a2000000-0000-4000-8000-000000000006",
  taskBeta: "b2000000-0000-4000-8000-000000000001",
  rowNeeds: "a3000000-0000-4000-8000-000000000001",
  rowNeeds2: "a3000000-0000-4000-8000-000000000002",
  rowRejected: "a3000000-0000-4000-8000-000000000003",
  rowJournal: "a3000000-0000-4000-8000-000000000004",
  rowBeta: "b3000000-0000-4000-8000-000000000001",
  docOld: "a4000000-0000-4000-8000-000000000001",
  docNew: "a4000000-0000-4000-8000-000000000002",
  docBeta: "b4000000-0000-4000-8000-000000000001",
  missing: "f0000000-0000-4000-8000-00000000dead"
} as const

export const SLUG = { tenantA: "alpha", tenantB: "beta" } as const

export const WF = {
  /** Global (tenantId null): upload, review, sign_off. */
  close: "month-close",
  /** Tenant A: two approvals. */
  approvals: "two-approvals",
  /** Tenant A, runbook null. */
  legacy: "legacy-import",
  /** Tenant B: one upload. */
  beta: "beta-intake"
} as const

/** Bytes of the newest seeded document: every byte value, twice (binary-safe check). */
export const DOC_NEW_BYTES = Uint8Array.from({ length: 512 }, (_, i) => i % 256)
export const DOC_OLD_BYTES = new TextEncoder().encode("Statement October 2026\n")

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")

const closeRunbook = {
  configSchema: {
    global: {
      type: "object",
      properties: {
        period: { type: "string", pattern: "^\\d{4}-(0[1-9]|1[0-2])$", description: "Accounting period" },
        threshold: { type: "number", default: 75 }
      }
    }
  },
  steps: [
    {
      id: "upload",
      title: "Upload bank statement",
      displayHint: { component: "FILE_UPLOAD", config: { accept: ["application/pdf"] } },
      args: { source: "bank_statement" }
    },
    { id: "review", title: "Review expenses", displayHint: { component: "TABLE_REVIEW", config: { ledger: "expenses" } }, args: {} },
    { id: "sign_off", title: "Sign off", displayHint: { component: "APPROVAL", config: {} }, args: {} }
  ]
}

const world: Fixture = {
  tenants: [
    { id: ID.tenantA, slug: SLUG.tenantA, name: "Alpha Holdings" },
    { id: ID.tenantB, slug: SLUG.tenantB, name: "Beta Corp" }
  ],
  entities: [
    { id: ID.entityA1, tenantId: ID.tenantA, slug: "alpha-us", name: "Alpha US" },
    { id: ID.entityA2, tenantId: ID.tenantA, slug: "alpha-uk", name: "Alpha UK" },
    { id: ID.entityB1, tenantId: ID.tenantB, slug: "beta-us", name: "Beta US" }
  ],
  workflows: [
    { id: WF.close, name: "Month close", tenantId: null, runbook: closeRunbook },
    {
      id: WF.approvals,
      name: "Two approvals",
      tenantId: ID.tenantA,
      runbook: {
        configSchema: {},
        steps: [
          { id: "first", title: "First approval", displayHint: { component: "APPROVAL", config: {} }, args: {} },
          {
            id: "second",
            title: "Second approval",
            displayHint: { component: "APPROVAL", config: {} },
            args: {},
            assignees: ["ann@alpha.example", "group:approvers"],
            dueIn: "P1D"
          }
        ]
      }
    },
    { id: WF.legacy, name: "Legacy import", tenantId: ID.tenantA, runbook: null },
    {
      id: WF.beta,
      name: "Beta intake",
      tenantId: ID.tenantB,
      runbook: {
        configSchema: {},
        steps: [{ id: "upload_b", title: "Upload", displayHint: { component: "FILE_UPLOAD", config: {} }, args: {} }]
      }
    }
  ],
  tasks: [
    {
      id: ID.taskUpload, tenantId: ID.tenantA, entityId: ID.entityA1, workflowId: WF.close, title: "Close 2026-10",
      status: "IN_PROGRESS", priority: "HIGH", createdAt: "2026-11-01T09:00:00.000Z", currentStep: "upload", snapshots: {}
    },
    {
      id: ID.taskReview, tenantId: ID.tenantA, entityId: ID.entityA1, workflowId: WF.close, title: "Close 2026-09",
      status: "IN_PROGRESS", priority: "HIGH", createdAt: "2026-10-01T09:00:00.000Z", currentStep: "review",
      snapshots: { upload: { files: 1, submittedBy: "dana@alpha.example" } }
    },
    {
      id: ID.taskApprove, tenantId: ID.tenantA, entityId: ID.entityA1, workflowId: WF.approvals, title: "Approvals",
      status: "IN_PROGRESS", priority: "HIGH", createdAt: "2026-11-02T09:00:00.000Z", currentStep: "first", snapshots: {}
    },
    {
      id: ID.taskCompleted, tenantId: ID.tenantA, entityId: ID.entityA1, workflowId: WF.approvals, title: "Approvals (done)",
      status: "COMPLETED", priority: "HIGH", createdAt: "2026-09-02T09:00:00.000Z", currentStep: null,
      snapshots: { first: { decision: "approved" }, second: { decision: "approved" } }
    },
    {
      id: ID.taskFailed, tenantId: ID.tenantA, entityId: ID.entityA2, workflowId: WF.close, title: "Close 2026-08",
      status: "FAILED", priority: "HIGH", createdAt: "2026-09-01T09:00:00.000Z", currentStep: null,
      snapshots: { upload: { files: 1 } }
    },
    {
      id: ID.taskLegacy, tenantId: ID.tenantA, entityId: ID.entityA2, workflowId: WF.legacy, title: "Legacy import",
      status: "IN_PROGRESS", priority: "HIGH", createdAt: "2026-11-03T09:00:00.000Z", currentStep: null, snapshots: {}
    },
    {
      id: ID.taskBeta, tenantId: ID.tenantB, entityId: ID.entityB1, workflowId: WF.beta, title: "Beta intake",
      status: "IN_PROGRESS", priority: "HIGH", createdAt: "2026-11-04T09:00:00.000Z", currentStep: "upload_b", snapshots: {}
    }
  ],
  subledgerRows: [
    {
      ledger: "expenses", id: ID.rowNeeds, tenantId: ID.tenantA, entityId: ID.entityA1, taskId: ID.taskReview,
      status: "NEEDS_ATTENTION", fields: { amount_gross: 182.4, merchant: "Blue Bottle", currency: "USD" }
    },
    {
      ledger: "expenses", id: ID.rowNeeds2, tenantId: ID.tenantA, entityId: ID.entityA1, taskId: ID.taskReview,
      status: "NEEDS_ATTENTION", fields: { amount_gross: 40, merchant: "Taxi", currency: "USD" }
    },
    {
      ledger: "expenses", id: ID.rowRejected, tenantId: ID.tenantA, entityId: ID.entityA1, taskId: ID.taskReview,
      status: "REJECTED", fields: { amount_gross: 12, merchant: "Parking", currency: "USD" }
    },
    {
      ledger: "journal_proposals", id: ID.rowJournal, tenantId: ID.tenantA, entityId: ID.entityA1, taskId: null,
      status: "NEEDS_ATTENTION", fields: { amount: 100, debit_account: "6000", credit_account: "1000" }
    },
    {
      ledger: "expenses", id: ID.rowBeta, tenantId: ID.tenantB, entityId: ID.entityB1, taskId: null,
      status: "NEEDS_ATTENTION", fields: { amount_gross: 99.99, merchant: "Canteen", currency: "USD" }
    }
  ],
  documents: [
    {
      id: ID.docOld, tenantId: ID.tenantA, taskId: ID.taskReview, source: "bank_statement", filename: "statement.txt",
      contentType: "text/plain", uploadedAt: "2026-10-01T10:00:00.000Z", dataBase64: b64(DOC_OLD_BYTES)
    },
    {
      id: ID.docNew, tenantId: ID.tenantA, taskId: ID.taskReview, source: "receipts", filename: "receipts.bin",
      contentType: "application/octet-stream", uploadedAt: "2026-10-02T10:00:00.000Z", dataBase64: b64(DOC_NEW_BYTES)
    },
    {
      id: ID.docBeta, tenantId: ID.tenantB, taskId: ID.taskBeta, source: "payroll", filename: "payroll.txt",
      contentType: "text/plain", uploadedAt: "2026-11-04T10:00:00.000Z", dataBase64: b64(new TextEncoder().encode("beta"))
    }
  ],
  // Out of seq order on purpose: readers sort by seq.
  events: [
    { taskId: ID.taskReview, type: "step.completed", source: "worker", seq: 2, payload: { step: "upload" } },
    {
      taskId: ID.taskReview, type: "reasoning.delta", source: "worker", sourceLabel: "Matcher", seq: 1,
      payload: { text: "Looking at the statement" }, groupKey: "g1"
    }
  ],
  glConnections: [
    {
      tenantId: ID.tenantA, provider: "local", service: "quickbooks_online", status: "ACTIVE",
      connectedAt: "2026-09-01T12:00:00.000Z",
      metadata: { name: "Alpha QBO", service: "quickbooks_online", updated_at: "2026-11-20T06:30:00.000Z" }
    }
  ]
}

export const contractFixture = (): Fixture => structuredClone(world)

/** The same world as fixture-file JSON (for implementations seeded from a file). */
export const contractFixtureJson = (): string => JSON.stringify(world, null, 2)
