/**
 * The world of the decision-link tests: a payment run waiting at an APPROVAL step that shows an
 * amount and rows, then a four-eyes CFO step; one task per test (links are single-use, and a
 * decided task moves on), plus another tenant's task at the same step.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"

export const ACME = "6a1f0d0e-5b43-4b6e-9c1d-1f0a2b3c4d5e"
export const GLOBEX = "7b2e1f1f-6c54-4c7f-8d2e-2a1b3c4d5e6f"
export const ACME_ENTITY = "8c3f2a2a-7d65-4d80-9e3f-3b2c4d5e6f70"
export const GLOBEX_ENTITY = "9d4a3b3b-8e76-4e91-af4a-4c3d5e6f7081"
export const GLOBEX_TASK = "ad5b4c4c-9f87-4fa2-b05b-5d4e6f708192"
/** At cfo_approval (four-eyes); controller_approval was approved by ann. */
export const CFO_TASK = "be6c5d5d-a098-4ab3-816c-6e5f70819203"

/** Tasks at controller_approval, one per use: `acmeTask(i)`. */
export const acmeTask = (i: number) => `cf7d6e6e-b1a9-4bc4-927d-${String(i).padStart(12, "0")}`
export const ACME_TASKS = 24

const runbook = {
  configSchema: { global: { type: "object", properties: {} } },
  steps: [
    {
      id: "controller_approval",
      title: "Controller approval",
      displayHint: { component: "APPROVAL", config: {} },
      args: {
        amount: "12,480.00 USD",
        payees: 3,
        rows: [
          { id: "r1", fields: { payee: "Delta Air Lines", amount_gross: 1240, currency: "USD" } },
          { id: "r2", fields: { payee: "Acme <script>alert(1)</script> Supplies", amount_gross: 9000, currency: "USD" } },
          { id: "r3", fields: { payee: "Ünïcode GmbH", amount_gross: 2240, currency: "USD" } }
        ]
      }
    },
    { id: "cfo_approval", title: "CFO approval", displayHint: { component: "APPROVAL", config: {} }, args: {}, requireDistinctDecider: true },
    { id: "file_receipt", title: "File the receipt", displayHint: { component: "FILE_UPLOAD", config: {} }, args: {} }
  ]
}

const task = (id: string, tenantId: string, entityId: string, title: string, currentStep: string, snapshots: object = {}) => ({
  id,
  tenantId,
  entityId,
  workflowId: "payment-run",
  title,
  status: "IN_PROGRESS",
  priority: "HIGH",
  createdAt: "2026-11-30T09:00:00.000Z",
  currentStep,
  snapshots
})

/** The world as a fixture object (a fresh copy each call: tests may change it). */
export const linksWorld = () =>
  structuredClone({
    tenants: [{ id: ACME, slug: "acme", name: "Acme" }, { id: GLOBEX, slug: "globex", name: "Globex" }],
    entities: [
      { id: ACME_ENTITY, tenantId: ACME, slug: "acme-us", name: "Acme US Inc." },
      { id: GLOBEX_ENTITY, tenantId: GLOBEX, slug: "globex-us", name: "Globex US" }
    ],
    workflows: [{ id: "payment-run", name: "Payment run", tenantId: null, runbook }],
    tasks: [
      ...Array.from({ length: ACME_TASKS }, (_, i) =>
        task(acmeTask(i), ACME, ACME_ENTITY, `Payment run ${i}`, "controller_approval")),
      task(CFO_TASK, ACME, ACME_ENTITY, "Payment run four-eyes", "cfo_approval", {
        controller_approval: { decision: "approved", reason: null, decidedAt: "2026-11-30T10:00:00.000Z", decidedBy: "Ann@Acme.example" }
      }),
      task(GLOBEX_TASK, GLOBEX, GLOBEX_ENTITY, "Globex payment run", "controller_approval")
    ]
  })

export const writeWorld = (dir: string): string => {
  const file = join(dir, "links-world.json")
  writeFileSync(file, JSON.stringify(linksWorld()))
  return file
}
