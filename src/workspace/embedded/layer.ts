/**
 * The embedded workspace as layers. Start-up order: open the database file (creating its
 * directory), run migrations, seed (SVC_SEED_FILE, or the demo fixture into an empty
 * database), deliver signals left pending by a previous run, then keep a background fiber
 * retrying failed deliveries.
 *
 * Settings (Effect Config):
 * - SVC_DATABASE_URL: a `file:` URL, default `file:./data/workspace.db` (relative to the cwd).
 * - SVC_SEED_FILE: optional fixture to load at every start (idempotent upserts).
 * - SVC_PUBLIC_URL: optional base URL of this process for GL connect-session links;
 *   default `http://<HOST>:<PORT>` (localhost when HOST is a wildcard).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Config from "effect/Config"
import type { ConfigError } from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { mkdirSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { WorkspaceClient } from "../../services/WorkspaceClient.js"
import type { Fixture, FixtureError } from "../fixture.js"
import { retryBusy } from "./db.js"
import { libsqlLayer } from "./libsql.js"
import { runMigrations } from "./migrations.js"
import { loadFixture, seedOnStart } from "./seed.js"
import { type EmbeddedWorkspace as EmbeddedWorkspaceService, makeEmbeddedWorkspaceWith } from "./store.js"

export type EmbeddedWorkspace = EmbeddedWorkspaceService

/** The embedded store with its extra operations (GL webhook, agent registry, outbox). */
export const EmbeddedWorkspace = Context.GenericTag<EmbeddedWorkspace>("workspace/EmbeddedWorkspace")

export class EmbeddedStartError extends Schema.TaggedError<EmbeddedStartError>()("EmbeddedStartError", {
  message: Schema.String
}) {}

export const DEFAULT_DATABASE_URL = "file:./data/workspace.db"

/**
 * The file path of a `file:` URL (`file:rel/path`, `file:/abs`, `file:///abs`). In-memory URLs
 * are refused: the driver opens a fresh connection after every transaction, and a fresh
 * in-memory connection is an empty database.
 */
export const databasePathOf = (url: string): Either<string> => {
  if (!url.startsWith("file:")) return { ok: false, message: `SVC_DATABASE_URL must be a file: URL, got "${url}"` }
  let path = url.slice("file:".length).split("?", 1)[0]!
  if (path.startsWith("//")) {
    const slash = path.indexOf("/", 2)
    const host = slash === -1 ? path.slice(2) : path.slice(2, slash)
    if (host !== "" && host !== "localhost") return { ok: false, message: `SVC_DATABASE_URL: a file: URL cannot name host "${host}"` }
    path = slash === -1 ? "" : path.slice(slash)
  }
  path = decodeURIComponent(path)
  if (path === "" || path.includes(":memory:")) {
    return { ok: false, message: "SVC_DATABASE_URL must name a database file (in-memory databases do not keep data between connections)" }
  }
  return { ok: true, value: resolve(path) }
}
type Either<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly message: string }

export interface EmbeddedLayerOptions {
  readonly url: string
  /** A fixture file loaded at start; without one an empty database gets the demo fixture. */
  readonly seedFile?: string | undefined
  /** A fixture loaded at start instead of seedFile / demo (tests build their world in code). */
  readonly fixture?: Fixture | undefined
  readonly publicUrl?: string | undefined
  /** Pause between background delivery passes; default 5 seconds. */
  readonly retryInterval?: Duration.DurationInput | undefined
  /** How long SQLite waits for another process's write lock; default 2000 ms (see ./libsql.ts). */
  readonly busyTimeoutMs?: number | undefined
}

/** SqlClient on the database file, its directory created first. */
export const sqlLayer = (
  url: string,
  options: { readonly busyTimeoutMs?: number | undefined } = {}
): Layer.Layer<SqlClient.SqlClient, EmbeddedStartError> =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const path = databasePathOf(url)
    if (!path.ok) return yield* new EmbeddedStartError({ message: path.message })
    yield* Effect.try({
      try: () => mkdirSync(dirname(path.value), { recursive: true }),
      catch: (e) => new EmbeddedStartError({ message: `Cannot create the directory of ${path.value}: ${(e as Error).message}` })
    })
    yield* Effect.logInfo(`workspace: database ${path.value}`)
    return libsqlLayer(url, options).pipe(
      Layer.mapError((e) => new EmbeddedStartError({ message: `Cannot open the workspace database ${path.value}: ${e.message}` }))
    )
  }))

/** The store over the SqlClient in context: migrate, seed, deliver what was pending, keep retrying. */
export const storeLayer = (
  options: Omit<EmbeddedLayerOptions, "url">
): Layer.Layer<EmbeddedWorkspace, EmbeddedStartError | FixtureError, SqlClient.SqlClient> =>
  Layer.scoped(
    EmbeddedWorkspace,
    Effect.gen(function*() {
      // Another process may be migrating the same file: wait for its lock instead of failing.
      yield* retryBusy(runMigrations).pipe(
        Effect.mapError((e) => new EmbeddedStartError({ message: `Workspace database migration failed: ${e.message}` }))
      )
      if (options.fixture !== undefined) yield* loadFixture(options.fixture)
      else yield* seedOnStart(Option.fromNullable(options.seedFile))
      const workspace = yield* makeEmbeddedWorkspaceWith({ publicUrl: options.publicUrl })
      const report = yield* workspace.deliverPending({ force: true })
      if (report.delivered + report.failed > 0) {
        yield* Effect.logInfo(`workspace: delivered ${report.delivered} pending signal(s) at start, ${report.failed} failed`)
      }
      yield* workspace.deliverPending().pipe(
        Effect.delay(options.retryInterval ?? Duration.seconds(5)),
        Effect.forever,
        Effect.forkScoped
      )
      return workspace
    })
  )

/** WorkspaceClient and EmbeddedWorkspace, plus the SqlClient (tests inspect tables with it). */
export const makeEmbeddedLayerWithSql = (options: EmbeddedLayerOptions) => {
  const store = Layer.provideMerge(storeLayer(options), sqlLayer(options.url, options))
  return Layer.provideMerge(Layer.effect(WorkspaceClient, EmbeddedWorkspace), store)
}

/** WorkspaceClient and EmbeddedWorkspace on the given database. */
export const makeEmbeddedLayer = (
  options: EmbeddedLayerOptions
): Layer.Layer<WorkspaceClient | EmbeddedWorkspace, EmbeddedStartError | FixtureError> => {
  const store = Layer.provide(storeLayer(options), sqlLayer(options.url, options))
  return Layer.provideMerge(Layer.effect(WorkspaceClient, EmbeddedWorkspace), store)
}

const wildcard = new Set(["0.0.0.0", "::", "[::]", ""])

export const embeddedSettings = Config.all({
  url: Config.string("SVC_DATABASE_URL").pipe(Config.withDefault(DEFAULT_DATABASE_URL)),
  seedFile: Config.option(Config.nonEmptyString("SVC_SEED_FILE")),
  publicUrl: Config.option(Config.url("SVC_PUBLIC_URL").pipe(Config.map((u) => u.toString()))),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.port("PORT").pipe(Config.withDefault(3000))
}).pipe(
  Config.map(({ host, port, publicUrl, seedFile, url }): EmbeddedLayerOptions => ({
    url,
    seedFile: Option.getOrUndefined(seedFile),
    publicUrl: Option.getOrElse(publicUrl, () => `http://${wildcard.has(host) ? "localhost" : host}:${port}`)
  }))
)

/** The embedded workspace from settings (SVC_DATABASE_URL, SVC_SEED_FILE, SVC_PUBLIC_URL). */
export const EmbeddedWorkspaceLive: Layer.Layer<
  WorkspaceClient | EmbeddedWorkspace,
  ConfigError | EmbeddedStartError | FixtureError
> = Layer.unwrapEffect(Effect.map(embeddedSettings, makeEmbeddedLayer))
