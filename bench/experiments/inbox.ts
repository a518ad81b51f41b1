/**
 * The inbox's page against one entity's task list (README "Inbox and assignment"): 500 entities,
 * 10,000 running tasks (20 each) on the built process's embedded SQLite store; p50 of a 50-item
 * `GET /v1/inbox` page (first page, and a page deep in the cursor walk, with `assignee=me`)
 * against `GET /v1/entities/:id/tasks` of one entity (20 tasks). Target: at most 2x.
 * Run: `npx tsx bench/experiments/inbox.ts` (after `npm run build`).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { randomUUID } from "node:crypto"
import { startBuilt } from "../../test/support/process.js"

const TENANT = "ded92d4b-f408-46e5-8cce-284491efe71d"
const ENTITIES = 500
const PER_ENTITY = 20
const ROUNDS = 60

const steps = ["prepare", "review", "sign_off"]
const fixture = {
  tenants: [{ id: TENANT, slug: "acme", name: "Acme" }],
  entities: Array.from({ length: ENTITIES }, (_, i) => ({ id: randomUUID(), tenantId: TENANT, slug: `e${i}`, name: `Entity ${i}` })),
  workflows: [{
    id: "close",
    name: "Close",
    tenantId: TENANT,
    runbook: {
      steps: steps.map((id, i) => ({
        id,
        title: id,
        displayHint: { component: "APPROVAL", config: {} },
        assignees: i === 0 ? ["ann@acme.test", "group:controllers"] : ["bob@acme.test"],
        dueIn: "P2D"
      }))
    }
  }],
  tasks: [] as Array<unknown>
}
let n = 0
for (const e of fixture.entities) {
  for (let i = 0; i < PER_ENTITY; i++, n++) {
    fixture.tasks.push({
      id: randomUUID(), tenantId: TENANT, entityId: e.id, workflowId: "close", title: `Close ${n}`, status: "IN_PROGRESS",
      priority: "HIGH", createdAt: new Date(Date.UTC(2026, 0, 1) + n * 60_000).toISOString(), currentStep: steps[n % 3]
    })
  }
}

const p50 = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const time = async (url: string, headers: Record<string, string> = {}) => {
  const out: Array<number> = []
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now()
    const res = await fetch(url, { headers })
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`)
    out.push(performance.now() - t)
  }
  return p50(out.slice(10))
}

const dir = mkdtempSync(join(tmpdir(), "bench-inbox-"))
const file = join(dir, "world.json")
writeFileSync(file, JSON.stringify(fixture))
const gw = await startBuilt({ SVC_DATABASE_URL: `file:${join(dir, "w.db")}`, SVC_SEED_FILE: file, SVC_TENANT_SLUG: "acme", SVC_ACTOR_HEADER: "x-forwarded-email" })
try {
  const me = { "x-forwarded-email": "ann@acme.test" }
  const list = await time(`${gw.url}/v1/entities/${fixture.entities[0]!.id}/tasks`)
  const first = await time(`${gw.url}/v1/inbox?limit=50`)
  const mine = await time(`${gw.url}/v1/inbox?limit=50&assignee=me`, me)
  let cursor = ""
  for (let i = 0; i < 100; i++) {
    const page = await (await fetch(`${gw.url}/v1/inbox?limit=50${cursor}`)).json() as { nextCursor?: string }
    cursor = `&cursor=${page.nextCursor}`
  }
  const deep = await time(`${gw.url}/v1/inbox?limit=50${cursor}`)
  const ratio = (x: number) => (x / list).toFixed(2)
  console.log(`one entity's task list (20 tasks): p50 ${list.toFixed(2)} ms`)
  console.log(`inbox, first page of 50:            p50 ${first.toFixed(2)} ms (${ratio(first)}x)`)
  console.log(`inbox, assignee=me page of 50:      p50 ${mine.toFixed(2)} ms (${ratio(mine)}x)`)
  console.log(`inbox, page 101 of 50 (cursor):     p50 ${deep.toFixed(2)} ms (${ratio(deep)}x)`)
} finally {
  await gw.stop()
  rmSync(dir, { recursive: true, force: true })
}
