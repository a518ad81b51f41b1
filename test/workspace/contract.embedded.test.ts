/**
 * The contract on the embedded store, each test on its own temp-file database seeded from the
 * contract fixture written out as a fixture file (the SVC_SEED_FILE path): once in-process, and
 * once as the standalone workspace server (WorkspaceApiLive over the embedded store, extras
 * included) behind the HTTP client.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import type { WorkspaceExtras } from "../../src/upstream/extras.js"
import { EmbeddedWorkspace, makeEmbeddedLayer } from "../../src/workspace/embedded/layer.js"
import type { Fixture } from "../../src/domain/fixture.js"
import { runWorkspaceContract } from "./contract.js"
import { clientOf, workspaceServer } from "./httpHarness.js"

const embedded = (fixture: Fixture) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "workspace-contract-"))),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      const seedFile = join(dir, "fixture.json")
      writeFileSync(seedFile, JSON.stringify(fixture))
      return makeEmbeddedLayer({ url: pathToFileURL(join(dir, "workspace.db")).href, seedFile })
    })
  ).pipe(Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")))

runWorkspaceContract("embedded store (temp-file database)", embedded)

runWorkspaceContract("HTTP client over the standalone workspace server (embedded store)", (fixture) =>
  Layer.unwrap(
    Effect.map(EmbeddedWorkspace, (store) => {
      const extras: WorkspaceExtras = store
      return clientOf(workspaceServer(store, extras))
    })
  ).pipe(Layer.provide(embedded(fixture))))
