/**
 * The workspace of in-process tests: the embedded store (the product's own) on a temp-file
 * SQLite database, behind the fault wrapper (./faultyWorkspace.ts), with readers for what tests
 * inspect (signals, tasks) and a few SQL edits for the states they set up.
 *
 * Why a copy of a template: measured on 2 shared cores (load ~16), per test, building the store
 * from nothing (11 migrations + the example fixture) took 150-215 ms; writing out a database
 * migrated and seeded once per fixture per test process, then opening it, 15-20 ms (the former
 * in-memory double: 1-2 ms). `:memory:` is no option: the driver opens a fresh connection per
 * transaction, and a fresh in-memory connection is an empty database.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as SqlClient from "effect/sql/SqlClient"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { TaskEventBell } from "../../src/services/TaskEventBell.js"
import { WorkspaceClient } from "../../src/upstream/WorkspaceClient.js"
import type { Workspace } from "../../src/upstream/model.js"
import type { Fixture } from "../../src/domain/fixture.js"
import { historyStart } from "../../src/domain/engine.js"
import { fromJson, type TaskRow, taskOfRow, toJson } from "../../src/workspace/embedded/db.js"
import { EmbeddedWorkspace, makeEmbeddedLayer, makeEmbeddedLayerWithSql } from "../../src/workspace/embedded/layer.js"
import { type FaultyWorkspace, withFaults } from "./faultyWorkspace.js"

/** A signal the store recorded (its outbox), in the order recorded. */
export interface SignalRecord extends Workspace.Signal {
  readonly rootTaskId: string
  readonly tenantId: string
  readonly at: string
}

type TaskFields = Partial<Pick<Workspace.Task, "status" | "currentStep" | "workflowId">>

/** The store with faults, as the gateway sees it, plus what tests read and set up through SQL. */
export interface TestWorkspace extends EmbeddedWorkspace, FaultyWorkspace {
  readonly sql: SqlClient.SqlClient
  /** Every signal recorded so far. */
  readonly signals: Effect.Effect<ReadonlyArray<SignalRecord>>
  readonly tasks: Effect.Effect<ReadonlyArray<Workspace.Task>>
  readonly task: (taskId: string) => Effect.Effect<Workspace.Task | undefined>
  /** Sets a task's fields directly (a state no request reaches by itself). */
  readonly setTask: (taskId: string, fields: TaskFields) => Effect.Effect<void>
  /** Inserts a copy of a task under another id. */
  readonly copyTask: (taskId: string, newId: string) => Effect.Effect<void>
  /** The GL adapter's success webhook: whether the session could still be completed. */
  readonly completeGl: (consumerId: string, service: string) => Effect.Effect<boolean>
}

export class TestStore extends Context.Service<TestStore, TestWorkspace>()("test/TestStore") {}

export interface StoreOptions {
  readonly glSessionTtlMs?: number | undefined
}

const processBell = Effect.runSync(Effect.service(TaskEventBell))

/**
 * The store keeps real time whatever clock the test runs on (it.effect's TestClock would hold its
 * relay, its busy retries and its bounded waits for good).
 */
const liveClock = Effect.runSync(Effect.service(Clock.Clock))

/** `store` with every Effect it returns run on the live clock. */
const onLiveClock = (store: EmbeddedWorkspace): EmbeddedWorkspace => {
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(store)) {
    out[name] = typeof value !== "function" ? value : (...args: Array<unknown>) => {
      const result = (value as (...args: Array<unknown>) => unknown).apply(store, args)
      return Effect.isEffect(result) ? Effect.provideService(result, Clock.Clock, liveClock) : result
    }
  }
  return out as unknown as EmbeddedWorkspace
}

const quiet = Layer.succeed(References.MinimumLogLevel, "Warn")

const tempDir = (prefix: string) => mkdtempSync(join(tmpdir(), prefix))

/** A migrated and seeded database, as the files a closed store leaves (the log only when not empty). */
interface Template {
  readonly db: Buffer
  readonly wal: Buffer | undefined
}

/**
 * One template per fixture (by content) for this process, kept in memory: its files are
 * removed as soon as it is read (test workers can end without an exit hook running).
 */
const templates = new Map<string, Promise<Template>>()

const templateOf = (fixture: Fixture): Promise<Template> => {
  const key = JSON.stringify(fixture)
  let template = templates.get(key)
  if (template === undefined) {
    template = Effect.runPromise(Effect.acquireUseRelease(
      Effect.sync(() => tempDir("store-template-")),
      (dir) => {
        const file = join(dir, "workspace.db")
        return Layer.build(makeEmbeddedLayer({ url: pathToFileURL(file).href, fixture, checkpointIntervalMs: 0 })).pipe(
          Effect.scoped,
          Effect.provide(quiet),
          Effect.andThen(Effect.sync((): Template => {
            const wal = `${file}-wal`
            return { db: readFileSync(file), wal: existsSync(wal) && statSync(wal).size > 0 ? readFileSync(wal) : undefined }
          }))
        )
      },
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    ))
    templates.set(key, template)
  }
  return template
}

const SIGNAL_COLUMNS = "task_id, name, payload, expected_step, root_task_id, tenant_id, created_at"

interface SignalRow {
  readonly task_id: string
  readonly name: string
  readonly payload: string
  readonly expected_step: string | null
  readonly root_task_id: string
  readonly tenant_id: string
  readonly created_at: string
}

const testWorkspaceOf = (store: EmbeddedWorkspace, sql: SqlClient.SqlClient): TestWorkspace => {
  const orDie = <A, E>(effect: Effect.Effect<A, E>) => Effect.orDie(effect)
  const helpers = {
    sql,
    signals: orDie(Effect.map(sql<SignalRow>`SELECT ${sql.literal(SIGNAL_COLUMNS)} FROM signals ORDER BY id`, (rows) =>
      rows.map((r): SignalRecord => ({
        taskId: r.task_id,
        name: r.name,
        payload: fromJson<Record<string, unknown>>(r.payload),
        ...(r.expected_step !== null ? { expectedStep: r.expected_step } : {}),
        rootTaskId: r.root_task_id,
        tenantId: r.tenant_id,
        at: r.created_at
      })))),
    tasks: orDie(Effect.map(sql<TaskRow>`SELECT * FROM tasks ORDER BY rowid`, (rows) => rows.map(taskOfRow))),
    task: (taskId: string) =>
      orDie(Effect.map(sql<TaskRow>`SELECT * FROM tasks WHERE id = ${taskId}`, ([row]) => row === undefined ? undefined : taskOfRow(row))),
    setTask: (taskId: string, fields: TaskFields) =>
      orDie(sql`UPDATE tasks SET ${
        sql.update({
          ...(fields.status !== undefined ? { status: fields.status } : {}),
          // Placed at the step since ever, as a seeded task: decisions that arrive now are for it.
          ...(fields.currentStep !== undefined
            ? { current_step: fields.currentStep, step_history: toJson(historyStart(fields.currentStep, 0)) }
            : {}),
          ...(fields.workflowId !== undefined ? { workflow_id: fields.workflowId } : {})
        })
      } WHERE id = ${taskId}`),
    copyTask: (taskId: string, newId: string) =>
      orDie(Effect.flatMap(sql<Record<string, unknown>>`SELECT * FROM tasks WHERE id = ${taskId}`, ([row]) =>
        sql`INSERT INTO tasks ${sql.insert({ ...row, id: newId })}`)),
    completeGl: (consumerId: string, service: string) =>
      Effect.match(store.completeGlSession(consumerId, service), { onFailure: () => false, onSuccess: () => true })
  }
  return Object.assign(withFaults(onLiveClock(store)), helpers)
}

/** A fresh copy of the fixture's database (its template's files), removed when the scope closes: its file: URL. */
const freshCopy = (fixture: Fixture) =>
  Effect.gen(function*() {
    const template = yield* Effect.promise(() => templateOf(fixture))
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => tempDir("store-")),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    const file = join(dir, "workspace.db")
    writeFileSync(file, template.db)
    if (template.wal !== undefined) writeFileSync(`${file}-wal`, template.wal)
    return pathToFileURL(file).href
  })

/**
 * WorkspaceClient (the store with faults) and TestStore (the same object) on a fresh copy of the
 * fixture's database, removed when the layer closes.
 */
export const storeLayer = (fixture: Fixture, options: StoreOptions = {}): Layer.Layer<WorkspaceClient | TestStore> =>
  Layer.unwrap(Effect.gen(function*() {
    const url = yield* freshCopy(fixture)
    const world = Layer.effectContext(Effect.gen(function*() {
      const workspace = testWorkspaceOf(yield* EmbeddedWorkspace, yield* SqlClient.SqlClient)
      return Context.make(TestStore, workspace).pipe(Context.add(WorkspaceClient, workspace))
    }))
    return world.pipe(
      Layer.provide(makeEmbeddedLayerWithSql({ url, checkpointIntervalMs: 0, glSessionTtlMs: options.glSessionTtlMs })),
      Layer.provide(quiet),
      Layer.provide(Layer.succeed(Clock.Clock, liveClock)),
      // The process's bell, whatever bell a test gives the gateway (one standing for another process keeps its own).
      Layer.provide(Layer.succeed(TaskEventBell, processBell))
    )
  })).pipe(Layer.orDie)

/**
 * The embedded store itself (no fault wrapper, so its own task board: the wrapper composes boards
 * from the wrapped calls) and its SQL client, on a fresh copy of the fixture's database, for the
 * scope's lifetime.
 */
export const embeddedStore = (fixture: Fixture) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      makeEmbeddedLayerWithSql({ url: yield* freshCopy(fixture), checkpointIntervalMs: 0 }).pipe(Layer.provide(quiet))
    )
    return { ...Context.get(context, EmbeddedWorkspace), sql: Context.get(context, SqlClient.SqlClient) }
  })

/** The store with faults on a fresh copy of the fixture's database, for the scope's lifetime. */
export const testStore = (fixture: Fixture, options: StoreOptions = {}) =>
  Effect.map(Layer.build(storeLayer(fixture, options)), (context) => Context.get(context, TestStore))

/** A layer made from the store (e.g. the workspace server over it), the store's fresh copy closing with it. */
export const overStore = <A, E, R>(
  fixture: Fixture,
  make: (workspace: TestWorkspace) => Layer.Layer<A, E, R>,
  options: StoreOptions = {}
): Layer.Layer<A, E, Exclude<R, TestStore | WorkspaceClient>> =>
  Layer.unwrap(Effect.map(Effect.service(TestStore), make)).pipe(Layer.provide(storeLayer(fixture, options)))
