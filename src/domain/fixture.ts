/**
 * The fixture format of ../shared/fixtures/README.md: one JSON file that seeds a workspace.
 * Decoding is strict (unknown keys are errors) and references are checked before anything
 * is written, with errors naming the JSON path.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { optional } from "../api/optional.js"
import { issueProblems } from "../api/issues.js"
import { Timestamp, Uuid } from "../api/ids.js"
import { Scalar } from "../api/resources.js"
import { GlConnection, Runbook } from "../upstream/model.js"

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

export const FixtureTenant = Schema.Struct({ id: Uuid, slug: Schema.String, name: Schema.String })
export const FixtureEntity = Schema.Struct({ id: Uuid, tenantId: Uuid, slug: Schema.String, name: Schema.String })
export const FixtureWorkflow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  tenantId: Schema.NullOr(Uuid),
  runbook: Schema.NullOr(Runbook)
})
export const FixtureTask = Schema.Struct({
  id: Uuid,
  tenantId: Uuid,
  entityId: Uuid,
  workflowId: Schema.String,
  title: Schema.String,
  status: Schema.Literals(["IN_PROGRESS", "COMPLETED", "FAILED"]),
  priority: Schema.String,
  createdAt: Timestamp,
  currentStep: Schema.NullOr(Schema.String),
  snapshots: JsonObject.pipe(Schema.withDecodingDefault(Effect.succeed({})))
})
export const FixtureRow = Schema.Struct({
  ledger: Schema.Literals(["expenses", "journal_proposals"]),
  id: Uuid,
  tenantId: Uuid,
  entityId: Uuid,
  taskId: Schema.NullOr(Uuid),
  status: Schema.String,
  fields: Schema.Record(Schema.String, Scalar)
})
export const FixtureDocument = Schema.Struct({
  id: Uuid,
  tenantId: Uuid,
  taskId: Uuid,
  source: Schema.String,
  filename: Schema.String,
  contentType: Schema.String,
  uploadedAt: Timestamp,
  dataBase64: Schema.String
})
export const FixtureEvent = Schema.Struct({
  taskId: Schema.String,
  type: Schema.String,
  source: Schema.String,
  sourceLabel: optional(Schema.String),
  seq: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  payload: JsonObject,
  groupKey: optional(Schema.String),
  createdAt: optional(Timestamp)
})

/**
 * Whose a fixture's event is: the operator's file speaks for the gateway, so the sources only the
 * gateway writes are its record (as the store's migration marked the events stored before the mark).
 */
export const fixtureOrigin = (e: { readonly source: string; readonly type: string }): "gateway" | "agent" | "producer" =>
  e.source === "audit" || e.source === "workspace" || (e.source.startsWith("agent:") && e.type === "agent.action")
    ? "gateway"
    : e.source.startsWith("agent:")
    ? "agent"
    : "producer"

/** A registered agent with a known key (demo and test worlds only): only the key's hash is stored. */
export const FixtureAgent = Schema.Struct({
  id: Uuid,
  tenantId: Uuid,
  kind: Schema.String,
  externalRef: Schema.String,
  name: Schema.String,
  apiKey: Schema.String.check(Schema.isMinLength(16, { message: "apiKey must be at least 16 characters" }))
})

export const Fixture = Schema.Struct({
  tenants: Schema.Array(FixtureTenant).pipe(Schema.withDecodingDefault(Effect.succeed([]))),
  entities: Schema.Array(FixtureEntity).pipe(Schema.withDecodingDefault(Effect.succeed([]))),
  workflows: Schema.Array(FixtureWorkflow).pipe(Schema.withDecodingDefault(Effect.succeed([]))),
  tasks: Schema.Array(FixtureTask).pipe(Schema.withDecodingDefault(Effect.succeed([]))),
  subledgerRows: Schema.Array(FixtureRow).pipe(Schema.withDecodingDefault(Effect.succeed([]))),
  documents: Schema.Array(FixtureDocument).pipe(Schema.withDecodingDefault(Effect.succeed([]))),
  events: Schema.Array(FixtureEvent).pipe(Schema.withDecodingDefault(Effect.succeed([]))),
  glConnections: Schema.Array(GlConnection).pipe(Schema.withDecodingDefault(Effect.succeed([]))),
  // Optional in the decoded type too: fixtures built in code need not name agents.
  agents: optional(Schema.Array(FixtureAgent))
})
export type Fixture = typeof Fixture.Type

export class FixtureError extends Schema.TaggedError<FixtureError>()("FixtureError", { message: Schema.String }) {}

const decode = Schema.decodeUnknownEffect(Fixture, { errors: "all", onExcessProperty: "error", reportInput: true })

const jsonPath = (path: ReadonlyArray<PropertyKey>) =>
  "$" + path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("")

/** Every reference resolves and a task's tenant is its entity's tenant; problems as `$.path: what`. */
export const referenceProblems = (f: Fixture): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const tenants = new Set(f.tenants.map((t) => t.id))
  const entities = new Map(f.entities.map((e) => [e.id, e]))
  const workflows = new Map(f.workflows.map((w) => [w.id, w]))
  const tasks = new Map(f.tasks.map((t) => [t.id, t]))
  const slugs = new Set<string>()
  f.tenants.forEach((t, i) => {
    if (slugs.has(t.slug)) problems.push(`$.tenants[${i}].slug: duplicate slug "${t.slug}"`)
    slugs.add(t.slug)
  })
  const tenantRef = (where: string, id: string) => {
    if (!tenants.has(id)) problems.push(`${where}.tenantId: no tenant ${id}`)
  }
  f.entities.forEach((e, i) => tenantRef(`$.entities[${i}]`, e.tenantId))
  f.workflows.forEach((w, i) => w.tenantId !== null && tenantRef(`$.workflows[${i}]`, w.tenantId))
  f.tasks.forEach((t, i) => {
    const at = `$.tasks[${i}]`
    tenantRef(at, t.tenantId)
    const entity = entities.get(t.entityId)
    if (entity === undefined) problems.push(`${at}.entityId: no entity ${t.entityId}`)
    else if (entity.tenantId !== t.tenantId) problems.push(`${at}.tenantId: must equal its entity's tenantId`)
    const wf = workflows.get(t.workflowId)
    if (wf === undefined) problems.push(`${at}.workflowId: no workflow "${t.workflowId}"`)
    else if (wf.tenantId !== null && wf.tenantId !== t.tenantId) problems.push(`${at}.workflowId: workflow of another tenant`)
    else if (t.currentStep !== null) {
      if (t.status !== "IN_PROGRESS") problems.push(`${at}.currentStep: must be null for a ${t.status} task`)
      else if (wf.runbook !== null && !wf.runbook.steps.some((s) => s.id === t.currentStep)) {
        problems.push(`${at}.currentStep: no step "${t.currentStep}" in workflow "${wf.id}"`)
      }
    }
  })
  f.subledgerRows.forEach((r, i) => {
    const at = `$.subledgerRows[${i}]`
    tenantRef(at, r.tenantId)
    const entity = entities.get(r.entityId)
    if (entity === undefined) problems.push(`${at}.entityId: no entity ${r.entityId}`)
    else if (entity.tenantId !== r.tenantId) problems.push(`${at}.tenantId: must equal its entity's tenantId`)
    if (r.taskId !== null && tasks.get(r.taskId)?.tenantId !== r.tenantId) problems.push(`${at}.taskId: no task ${r.taskId} of this tenant`)
  })
  f.documents.forEach((d, i) => {
    const at = `$.documents[${i}]`
    tenantRef(at, d.tenantId)
    if (tasks.get(d.taskId)?.tenantId !== d.tenantId) problems.push(`${at}.taskId: no task ${d.taskId} of this tenant`)
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(d.dataBase64) || d.dataBase64.length % 4 !== 0) {
      problems.push(`${at}.dataBase64: not valid base64`)
    }
  })
  f.events.forEach((e, i) => {
    const root = e.taskId.split(":", 1)[0]!
    if (!tasks.has(root)) problems.push(`$.events[${i}].taskId: no task ${root}`)
  })
  f.glConnections.forEach((g, i) => tenantRef(`$.glConnections[${i}]`, g.tenantId))
  const agents = new Map((f.agents ?? []).map((a) => [a.id, a]))
  const keys = new Set<string>()
  ;(f.agents ?? []).forEach((a, i) => {
    tenantRef(`$.agents[${i}]`, a.tenantId)
    if (keys.has(a.apiKey)) problems.push(`$.agents[${i}].apiKey: the same key as another agent`)
    keys.add(a.apiKey)
  })
  // A step's agent is a registered agent of the tenant whose tasks run the step.
  f.workflows.forEach((w, i) =>
    w.runbook?.steps.forEach((s, j) => {
      if (s.agentId === undefined) return
      const at = `$.workflows[${i}].runbook.steps[${j}].agentId`
      const agent = agents.get(s.agentId)
      if (agent === undefined) problems.push(`${at}: no agent ${s.agentId}`)
      else if (w.tenantId !== null && agent.tenantId !== w.tenantId) problems.push(`${at}: agent of another tenant`)
    })
  )
  f.tasks.forEach((t, i) => {
    const wf = workflows.get(t.workflowId)
    if (wf?.tenantId !== null) return // checked with its workflow (or the workflow is missing)
    wf.runbook?.steps.forEach((s) => {
      const agent = s.agentId === undefined ? undefined : agents.get(s.agentId)
      if (agent !== undefined && agent.tenantId !== t.tenantId) {
        problems.push(`$.tasks[${i}].workflowId: step "${s.id}" is assigned to agent ${s.agentId} of another tenant`)
      }
    })
  })
  return problems
}

/** Decodes and checks a fixture; the error names the file, the JSON path and what is wrong. */
export const parseFixture = (file: string, json: unknown): Effect.Effect<Fixture, FixtureError> =>
  decode(json).pipe(
    Effect.mapError((e) =>
      new FixtureError({
        message: `Bad fixture ${file}:\n` +
          issueProblems(e.issue).map((i) => `  ${jsonPath(i.path)}: ${i.message}`).join("\n")
      })
    ),
    Effect.flatMap((fixture) => {
      const problems = referenceProblems(fixture)
      return problems.length === 0
        ? Effect.succeed(fixture)
        : Effect.fail(new FixtureError({ message: `Bad fixture ${file}:\n${problems.map((p) => `  ${p}`).join("\n")}` }))
    })
  )

export const readFixture = (file: string): Effect.Effect<Fixture, FixtureError> =>
  Effect.tryPromise({
    try: async () => JSON.parse(await (await import("node:fs/promises")).readFile(file, "utf8")) as unknown,
    catch: (e) => new FixtureError({ message: `Cannot read fixture ${file}: ${e instanceof Error ? e.message : String(e)}` })
  }).pipe(Effect.flatMap((json) => parseFixture(file, json)))
