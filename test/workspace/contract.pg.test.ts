/**
 * The WorkspaceClient contract on PostgreSQL, unchanged: each test on a fresh database of the
 * run's server (test/support/pgGlobalSetup.ts) seeded from the contract fixture; in-process and
 * behind the standalone workspace server's HTTP client, as on SQLite (contract.embedded.test.ts).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import type { WorkspaceExtras } from "../../src/upstream/extras.js"
import { EmbeddedWorkspace, makeEmbeddedLayer } from "../../src/workspace/embedded/layer.js"
import type { Fixture } from "../../src/domain/fixture.js"
import { testDatabase } from "../support/postgres.js"
import { runWorkspaceContract } from "./contract.js"
import { clientOf, workspaceServer } from "./httpHarness.js"

// One process reads every request here, as on SQLite: the replicas' 100 ms wait would add 45 s
// to this file's decisions and guard against nothing (test/decisions/replicas.pg.test.ts does).
const SETTLE_MS = 3

const onPostgres = (fixture: Fixture) =>
  Layer.unwrap(
    Effect.map(Effect.promise(() => testDatabase("contract")), (url) => makeEmbeddedLayer({ url, fixture, poolSize: 4, decisionSettleMs: SETTLE_MS }))
  ).pipe(Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")))

runWorkspaceContract("embedded store on PostgreSQL", onPostgres)

runWorkspaceContract("HTTP client over the standalone workspace server (PostgreSQL)", (fixture) =>
  Layer.unwrap(
    Effect.map(EmbeddedWorkspace, (store) => {
      const extras: WorkspaceExtras = store
      return clientOf(workspaceServer(store, extras))
    })
  ).pipe(Layer.provide(onPostgres(fixture))))
