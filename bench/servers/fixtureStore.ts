/**
 * The workspace of the in-process benchmark servers (S1, S2 and the S1 experiments): the embedded
 * store on a temp-file database seeded from a fixture file, every next-step lookup delayed by
 * `lookupMs` (a slow upstream) through the tests' fault wrapper. The database is removed at exit.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { WorkspaceClient } from "../../src/upstream/WorkspaceClient.js"
import { makeEmbeddedLayer } from "../../src/workspace/embedded/layer.js"
import { withFaults } from "../../test/support/faultyWorkspace.js"

export const fixtureStore = (fixtureFile: string, lookupMs = 0): Layer.Layer<WorkspaceClient, unknown> =>
  Layer.effect(
    WorkspaceClient,
    Effect.map(Effect.service(WorkspaceClient), (store) => {
      const workspace = withFaults(store)
      if (lookupMs > 0) workspace.faults.nextStepDelayMs = lookupMs
      return workspace
    })
  ).pipe(Layer.provide(Layer.unwrap(Effect.sync(() => {
    const dir = mkdtempSync(join(tmpdir(), "bench-store-"))
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }))
    return makeEmbeddedLayer({ url: pathToFileURL(join(dir, "workspace.db")).href, seedFile: fixtureFile, retryInterval: "1 hour" })
  }))))
