/**
 * The embedded workspace as layers. Start-up order: open the database (creating its directory),
 * run migrations, seed (SVC_SEED_FILE, or the demo fixture into an empty database), then start
 * the outbox relay in the background: signals left pending by a previous run are delivered
 * while the process already serves. Closing the layer stops the relay (pending signals stay
 * recorded), then checkpoints and closes the database. Its settings (`embeddedSettings`: the
 * database, its pool and timeouts, the outbox, webhooks, links) are declared in
 * src/config/settings.ts.
 */
import * as SqlClient from "effect/sql/SqlClient"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { mkdirSync } from "node:fs"
import { dirname, resolve } from "node:path"
// Errors name the setting, its value and what it takes (SVC_DB_POOL_SIZE="0": expected a positive integer).
import { intSetting, optionalBaseUrlSetting, optionalIntSetting } from "../../config/read.js"
import { unsetWhenEmpty } from "../../config/unsetWhenEmpty.js"
import { invalidSetting } from "../../config/settingErrors.js"
import { UploadSpoolDirectory, WorkspaceClient } from "../../upstream/WorkspaceClient.js"
import type { Fixture, FixtureError } from "../../domain/fixture.js"
import { BusyTimeout, DEFAULT_BUSY_TIMEOUT_MS, describeError, retryBusy } from "./db.js"
import { DocumentFiles } from "./DocumentFiles.js"
import { stagesChunks, sweepStaged } from "./stagedChunks.js"
import { libsqlLayer } from "./libsql.js"
import { runMigrations } from "./migrations.js"
import { DEFAULT_CONNECT_TIMEOUT_MS, isPostgresUrl, redactUrl } from "./pgUrl.js"
import { DEFAULT_SIGNAL_AWAIT_MAX, DEFAULT_SIGNAL_AWAIT_MS } from "./outbox.js"
import { describePgOpenFailure, describeSqliteOpenFailure } from "./openFailure.js"
import { loadFixture, seedOnStart } from "./seed.js"
import type { WebhookDeliveryOptions } from "./webhookDelivery.js"
import { webhookSettings } from "./webhookSettings.js"
import { type EmbeddedWorkspace as EmbeddedWorkspaceService, makeEmbeddedWorkspaceWith } from "./store.js"
import { defaultOf, defaultTextOf } from "../../config/settings.js"
import { quoteSetting } from "../../config/settingErrors.js"

export type EmbeddedWorkspace = EmbeddedWorkspaceService

/** The embedded store with its extra operations (GL webhook, agent registry, outbox). */
export const EmbeddedWorkspace = Context.Service<EmbeddedWorkspace>("workspace/embedded/EmbeddedWorkspace")

export class EmbeddedStartError extends Schema.TaggedError<EmbeddedStartError>()("EmbeddedStartError", {
  message: Schema.String
}) {}

export const DEFAULT_DATABASE_URL = defaultTextOf("SVC_DATABASE_URL")

/**
 * The file path of a `file:` URL (`file:rel/path`, `file:/abs`, `file:///abs`). In-memory URLs
 * are refused: the driver opens a fresh connection after every transaction, and a fresh
 * in-memory connection is an empty database.
 */
export const databasePathOf = (url: string): Either<string> => {
  if (!url.startsWith("file:")) {
    // Quoted as every refused setting is: its credentials masked, controls visible, clipped.
    return { ok: false, message: `SVC_DATABASE_URL must be a file: or postgres:// URL, got ${quoteSetting("SVC_DATABASE_URL", url)}` }
  }
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
/** What the start-up log names: the file's path, or the PostgreSQL URL without its password. */
export const databaseLabel = (url: string): string => {
  if (isPostgresUrl(url)) return redactUrl(url)
  const path = databasePathOf(url)
  return path.ok ? path.value : url
}

type Either<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly message: string }

export interface EmbeddedLayerOptions {
  readonly url: string
  /** A fixture file loaded at start; without one an empty database gets the demo fixture. */
  readonly seedFile?: string | undefined
  /** A fixture loaded at start instead of seedFile / demo (tests build their world in code). */
  readonly fixture?: Fixture | undefined
  readonly publicUrl?: string | undefined
  /** SVC_PUBLIC_URL when set explicitly: decision links are made under it, none without it (./links.ts). */
  readonly explicitPublicUrl?: Option.Option<string> | undefined
  /** SVC_LINK_SIGNING_KEYS: the first signs decision links, all verify; unset: a key generated into the database. */
  readonly linkSigningKeys?: Option.Option<ReadonlyArray<string>> | undefined
  /** The tenant whose gateway this process is (SVC_TENANT_SLUG): task.waiting links are made for it only. */
  readonly linkTenantSlug?: string | undefined
  /** Why this process makes no decision links at all (see ./store.ts). */
  readonly linksUnavailable?: string | undefined
  /** Pause between background delivery passes while no write wakes the relay; default 2 seconds. */
  readonly retryInterval?: Duration.Input | undefined
  /** How long an operation waits for another process's write lock before a 503; default 5000 ms. */
  readonly busyTimeoutMs?: number | undefined
  /** Pause between TRUNCATE checkpoints; default 60 s; 0 = only when the layer closes. */
  readonly checkpointIntervalMs?: number | undefined
  /** journal_size_limit of the write-ahead log; default 64 MiB. */
  readonly walLimitBytes?: number | undefined
  /** Signals per delivery transaction; default 200. */
  readonly signalBatchSize?: number | undefined
  /** Tasks the relay delivers to at once; default 4. */
  readonly signalConcurrency?: number | undefined
  /** A write with at most this many signals delivers them before answering; default 100. */
  readonly signalAwaitMax?: number | undefined
  /** How long such a write waits for that delivery; default 2000 ms; 0 = answer at the commit. */
  readonly signalAwaitMs?: number | undefined
  /** PostgreSQL: connections this process opens at most; default 10. */
  readonly poolSize?: number | undefined
  /** PostgreSQL: statements running longer are cancelled (503); default 30000 ms; 0 = no limit. */
  readonly statementTimeoutMs?: number | undefined
  /** PostgreSQL: how long opening a connection may take; default 5000 ms. */
  readonly connectTimeoutMs?: number | undefined
  /** PostgreSQL: how long a replica's claim on signals holds; default 30000 ms. */
  readonly signalLeaseMs?: number | undefined
  /** How long a step-bound write waits after its arrival (./transaction.ts); default 3 ms, 100 on PostgreSQL. */
  readonly decisionSettleMs?: number | undefined
  /** How long a GL connect session can be completed after it was created; default 15 minutes. */
  readonly glSessionTtlMs?: number | undefined
  /** Outbound webhook delivery (./webhookDelivery.ts, ./webhookSettings.ts). */
  readonly webhooks?: WebhookDeliveryOptions | undefined
}

/** SqlClient on PostgreSQL (a postgres:// URL) or on the database file, its directory created first. */
export const sqlLayer = (
  url: string,
  options: Pick<
    EmbeddedLayerOptions,
    "checkpointIntervalMs" | "walLimitBytes" | "poolSize" | "statementTimeoutMs" | "connectTimeoutMs" | "busyTimeoutMs"
  > = {}
): Layer.Layer<SqlClient.SqlClient, EmbeddedStartError> =>
  Layer.unwrap(Effect.gen(function*() {
    if (isPostgresUrl(url)) {
      yield* Effect.logInfo(`workspace: database ${redactUrl(url)}`)
      // The driver is loaded only here: a SQLite process never pays for it.
      const { pgLayer } = yield* Effect.promise(() => import("./pg.js"))
      return mapLayerError(pgLayer(url, options), (e) =>
        new EmbeddedStartError({
          message: `Cannot open the workspace database ${redactUrl(url)}: ${
            describePgOpenFailure(describeError(e), options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS)
          }`
        }))
    }
    const path = databasePathOf(url)
    if (!path.ok) return yield* new EmbeddedStartError({ message: path.message })
    yield* Effect.try({
      try: () => mkdirSync(dirname(path.value), { recursive: true }),
      catch: (e) => new EmbeddedStartError({ message: `Cannot create the directory of ${path.value}: ${(e as Error).message}` })
    })
    yield* Effect.logInfo(`workspace: database ${path.value}`)
    return mapLayerError(
      libsqlLayer(url, {
        path: path.value,
        checkpointIntervalMs: options.checkpointIntervalMs,
        walLimitBytes: options.walLimitBytes
      }),
      (e) =>
        new EmbeddedStartError({
          message: `Cannot open the workspace database ${path.value}: ${describeSqliteOpenFailure(path.value, e.message)}`
        })
    )
  }))

/** The layer's services, its start failure mapped (Layer has no mapError in Effect 4). */
const mapLayerError = <A, E, E2>(layer: Layer.Layer<A, E>, f: (e: E) => E2): Layer.Layer<A, E2> =>
  Layer.effectContext(Effect.mapError(Layer.build(layer), f))

/** How long migrations and seeding wait for another process's lock at start (it may be migrating too). */
const START_BUSY_TIMEOUT_MS = 30_000

/**
 * The store over the SqlClient in context: migrate and seed (the layer is ready only after
 * both), then the relay in the background: a backlog left by a previous run does not delay the
 * start. The relay stops when the layer closes.
 */
export const storeLayer = (
  options: Omit<EmbeddedLayerOptions, "url">
): Layer.Layer<EmbeddedWorkspace, EmbeddedStartError | FixtureError, SqlClient.SqlClient> =>
  Layer.effect(
    EmbeddedWorkspace,
    Effect.gen(function*() {
      // Another process may be migrating the same file: wait for its lock instead of failing.
      yield* Effect.gen(function*() {
        yield* retryBusy(runMigrations).pipe(
          // The driver's reason (e.g. permission denied for schema public), not the SQL client's wrapper.
          Effect.mapError((e) => new EmbeddedStartError({ message: `Workspace database migration failed: ${describeError(e)}` }))
        )
        if (options.fixture !== undefined) yield* loadFixture(options.fixture)
        else yield* seedOnStart(Option.fromNullishOr(options.seedFile))
      }).pipe(Effect.provideService(BusyTimeout, Math.max(START_BUSY_TIMEOUT_MS, options.busyTimeoutMs ?? 0)))
      const workspace = yield* makeEmbeddedWorkspaceWith({
        publicUrl: options.publicUrl,
        explicitPublicUrl: options.explicitPublicUrl,
        linkSigningKeys: options.linkSigningKeys,
        linksUnavailable: options.linksUnavailable,
        linkTenantSlug: options.linkTenantSlug,
        glSessionTtlMs: options.glSessionTtlMs,
        webhooks: options.webhooks,
        decisionSettleMs: options.decisionSettleMs,
        relay: {
          batchSize: options.signalBatchSize,
          concurrency: options.signalConcurrency,
          awaitMaxSignals: options.signalAwaitMax,
          awaitTimeout: Duration.millis(options.signalAwaitMs ?? DEFAULT_SIGNAL_AWAIT_MS),
          pollInterval: options.retryInterval,
          leaseMs: options.signalLeaseMs
        }
      }).pipe(Effect.provideService(BusyTimeout, options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS))
      // What a crash left in the documents directory (./DocumentFiles.ts), in the background.
      const files = yield* Effect.serviceOption(DocumentFiles)
      const sql = yield* SqlClient.SqlClient
      if (Option.isSome(files)) {
        yield* Effect.forkScoped(files.value.sweep((id) =>
          Effect.map(sql<{ id: string }>`SELECT id FROM documents WHERE id = ${id} AND file_backed = 1`, (rows) => rows.length > 0)
        ))
      }
      // Chunks staged by an upload that a crash kept from being recorded (./stagedChunks.ts).
      if (stagesChunks(sql)) yield* Effect.forkScoped(sweepStaged(sql))
      yield* Effect.forkScoped(workspace.relay)
      yield* Effect.forkScoped(workspace.webhookDeliverer)
      return workspace
    })
  )

/**
 * Raw uploads spool into the documents directory where the store keeps large documents as files
 * (./DocumentFiles.ts): storing one is then a rename. Elsewhere (PostgreSQL, in memory) unset.
 */
const spoolDirectoryLayer = Layer.effect(
  UploadSpoolDirectory,
  Effect.map(Effect.serviceOption(DocumentFiles), Option.match({ onNone: () => undefined, onSome: (files) => files.dir }))
)

/** WorkspaceClient and EmbeddedWorkspace, plus the SqlClient (tests inspect tables with it). */
export const makeEmbeddedLayerWithSql = (options: EmbeddedLayerOptions) => {
  const store = Layer.provideMerge(Layer.merge(storeLayer(options), spoolDirectoryLayer), sqlLayer(options.url, options))
  return Layer.provideMerge(Layer.effect(WorkspaceClient, EmbeddedWorkspace), store)
}

/** WorkspaceClient and EmbeddedWorkspace on the given database (and where raw uploads spool). */
export const makeEmbeddedLayer = (
  options: EmbeddedLayerOptions
): Layer.Layer<WorkspaceClient | EmbeddedWorkspace, EmbeddedStartError | FixtureError> => {
  const store = Layer.provide(Layer.merge(storeLayer(options), spoolDirectoryLayer), sqlLayer(options.url, options))
  return Layer.provideMerge(Layer.effect(WorkspaceClient, EmbeddedWorkspace), store)
}

const wildcard = new Set(["0.0.0.0", "::", "[::]", ""])

/** Shortest signing key accepted: 32 characters (a random 24 bytes in base64). */
export const MIN_LINK_KEY_LENGTH = 32

/**
 * SVC_LINK_SIGNING_KEYS: comma-separated keys, each at least 32 visible ASCII characters; the
 * first signs new links, every one verifies (rotation: put the new key first, drop the old one
 * once its links have expired). The value is never printed.
 */
export const linkSigningKeysSetting: Config.Config<Option.Option<ReadonlyArray<string>>> = Config.option(
  Config.Redacted("SVC_LINK_SIGNING_KEYS")
).pipe(
  Config.mapEffect((value) => {
    if (Option.isNone(value)) return Effect.succeed(Option.none())
    const keys = Redacted.value(value.value).split(",").map((k) => k.trim())
    const bad = keys.findIndex((k) => k.length < MIN_LINK_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(k))
    return bad === -1
      ? Effect.succeed(Option.some(keys))
      : Effect.fail(invalidSetting(
        `SVC_LINK_SIGNING_KEYS (not shown): key ${bad + 1} of ${keys.length} is not at least ${MIN_LINK_KEY_LENGTH} visible ASCII ` +
          "characters; give comma-separated keys, the one that signs first (e.g. openssl rand -base64 32)"
      ))
  })
)


/** The demo fixture's tenant: the one a gateway in embedded mode binds when SVC_TENANT_SLUG is unset (src/main.ts). */
export const DEMO_TENANT_SLUG = "acme"

export const embeddedSettings = Config.all({
  url: Config.String("SVC_DATABASE_URL").pipe(Config.withDefault(DEFAULT_DATABASE_URL)),
  seedFile: unsetWhenEmpty("SVC_SEED_FILE"),
  publicUrl: optionalBaseUrlSetting("SVC_PUBLIC_URL"),
  host: Config.String("HOST").pipe(Config.withDefault(defaultTextOf("HOST"))),
  port: Config.Port("PORT").pipe(Config.withDefault(defaultOf("PORT"))),
  busyTimeoutMs: intSetting("SVC_DB_BUSY_TIMEOUT_MS"),
  checkpointIntervalMs: intSetting("SVC_DB_CHECKPOINT_INTERVAL_MS"),
  walLimitBytes: intSetting("SVC_DB_WAL_LIMIT_BYTES"),
  signalBatchSize: intSetting("SVC_SIGNAL_BATCH_SIZE"),
  signalConcurrency: intSetting("SVC_SIGNAL_CONCURRENCY"),
  signalAwaitMs: intSetting("SVC_SIGNAL_AWAIT_MS"),
  poolSize: intSetting("SVC_DB_POOL_SIZE"),
  statementTimeoutMs: intSetting("SVC_DB_STATEMENT_TIMEOUT_MS"),
  connectTimeoutMs: intSetting("SVC_DB_CONNECT_TIMEOUT_MS"),
  signalLeaseMs: intSetting("SVC_SIGNAL_LEASE_MS"),
  decisionSettleMs: optionalIntSetting("SVC_DECISION_SETTLE_MS"),
  glSessionTtlMs: intSetting("SVC_GL_SESSION_TTL_MS"),
  linkSigningKeys: linkSigningKeysSetting,
  // Unset: the gateway binds the demo tenant (src/main.ts).
  tenantSlug: unsetWhenEmpty("SVC_TENANT_SLUG"),
  webhooks: webhookSettings
}).pipe(
  Config.map(({ host, port, publicUrl, seedFile, tenantSlug, url, webhooks, ...tuning }): EmbeddedLayerOptions => ({
    url,
    linkTenantSlug: Option.getOrElse(tenantSlug, () => DEMO_TENANT_SLUG),
    seedFile: Option.getOrUndefined(seedFile),
    publicUrl: Option.getOrElse(publicUrl, () => `http://${wildcard.has(host) ? "localhost" : host}:${port}`),
    explicitPublicUrl: publicUrl,
    // Webhook events carry the console URL only where the operator named the public URL.
    webhooks: { ...webhooks, publicUrl },
    ...tuning,
    signalAwaitMax: DEFAULT_SIGNAL_AWAIT_MAX
  }))
)

/** The embedded workspace from settings (SVC_DATABASE_URL, SVC_SEED_FILE, SVC_PUBLIC_URL). */
export const EmbeddedWorkspaceLive: Layer.Layer<
  WorkspaceClient | EmbeddedWorkspace,
  Config.ConfigError | EmbeddedStartError | FixtureError
> = Layer.unwrap(Effect.map(embeddedSettings, makeEmbeddedLayer))
