/**
 * The workspace service (WorkspaceApi, every /workspace operation) served by WorkspaceApiLive
 * on a loopback port, held to the OpenAPI document it serves at /workspace/openapi.json (the
 * one published as docs/workspace-openapi.json):
 * - over the embedded store given as a bare WorkspaceClient, with no registry behind it: the
 *   registry and GL webhook answer 501 there, as the document declares (the one allowed 5xx);
 * - over the embedded SQLite store (a temp-file database), registry included: nothing >= 500.
 * Both start from test/fixtures/example.json.
 *
 * Both are the same store and the same server code but for the registry and webhook routes, and
 * the requests are generated from the same seed: on every other operation the bare server met
 * exactly the requests the second one meets, through the same code. So the bare one's generated
 * requests go only to the operations where it answers otherwise (those its document declares a
 * 501 for); the document checks, undeclared methods and undeclared paths still cover all of it.
 */
import type * as HttpServer from "effect/http/HttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as References from "effect/References"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { describe, expect, it } from "vitest"
import { WorkspaceApi } from "../../src/upstream/WorkspaceApi.js"
import { EmbeddedWorkspace, makeEmbeddedLayer } from "../../src/workspace/embedded/layer.js"
import { exampleFixture } from "../support/gateway.js"
import { overStore } from "../support/storeWorkspace.js"
import { serverUrl, workspaceServer } from "../workspace/httpHarness.js"
import { DOMAIN_HINTS, hintsFromFixture, mergeHints, operationsOf, stringsOf } from "./arbitraries.js"
import { contractSuite, type Target } from "./suite.js"

/** "METHOD /template" of the operations the published document declares a 501 for. */
const published = JSON.parse(readFileSync(new URL("../../docs/workspace-openapi.json", import.meta.url), "utf8")) as {
  paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>
}
const without = new Set(
  Object.entries(published.paths).flatMap(([template, ops]) =>
    Object.entries(ops).filter(([, op]) => op.responses?.["501"] !== undefined).map(([method]) => `${method.toUpperCase()} ${template}`)
  )
)

describe("the bare server's own operations", () => {
  it("are the API's operations the published document declares a 501 for (the registry's and webhooks')", () => {
    const api = new Set(operationsOf(WorkspaceApi).map((o) => `${o.method} ${o.template}`))
    expect([...without].filter((o) => !api.has(o))).toEqual([])
    expect(without.size).toBeGreaterThanOrEqual(10)
  })
})

const fixtureJson = JSON.parse(readFileSync(new URL("../fixtures/example.json", import.meta.url), "utf8")) as unknown
const fromFixture = hintsFromFixture(fixtureJson)
const MAX_BODY_BYTES = 1024 * 1024

const arbitraries = {
  hints: mergeHints(fromFixture, DOMAIN_HINTS, {
    documentId: fromFixture.documentId ?? [],
    // A row action a TABLE_REVIEW step takes, on a row of the fixture.
    payload: (fromFixture.rowId ?? []).map((rowId) => ({ kind: "row_action", ledger: "expenses", action: "reject_row", rowId }))
  }),
  strings: stringsOf(fixtureJson)
}

const serve = async (server: Layer.Layer<HttpServer.HttpServer, unknown>, cleanup: () => void = () => {}): Promise<Target> => {
  const runtime = ManagedRuntime.make(server.pipe(Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))))
  const baseUrl = await runtime.runPromise(serverUrl)
  const document = await (await fetch(`${baseUrl}/workspace/openapi.json`)).json()
  return {
    baseUrl,
    document,
    close: async () => {
      await runtime.dispose()
      cleanup()
    }
  }
}

contractSuite({
  name: "workspace over a bare WorkspaceClient (no registry: 501 there)",
  api: WorkspaceApi,
  maxBodyBytes: MAX_BODY_BYTES,
  arbitraries,
  // Documented: a server given no WorkspaceExtras answers 501 on the registry and webhook routes.
  allow5xx: (status, r, contract) =>
    status === 501 && contract.operation(r.method, r.operation.template)?.op.responses?.["501"] !== undefined,
  exercised: (operation) => without.has(`${operation.method} ${operation.template}`),
  start: () => serve(overStore(exampleFixture, (ws) => workspaceServer(ws, undefined, { maxBodyBytes: MAX_BODY_BYTES })))
})

contractSuite({
  name: "workspace over the embedded SQLite store (registry included)",
  api: WorkspaceApi,
  maxBodyBytes: MAX_BODY_BYTES,
  arbitraries,
  start: () => {
    const dir = mkdtempSync(join(tmpdir(), "contract-workspace-"))
    const embedded = makeEmbeddedLayer({ url: pathToFileURL(join(dir, "workspace.db")).href, fixture: exampleFixture })
    const server = Layer.unwrap(
      Effect.map(EmbeddedWorkspace, (store) => workspaceServer(store, store, { maxBodyBytes: MAX_BODY_BYTES }))
    ).pipe(Layer.provide(embedded))
    return serve(server, () => rmSync(dir, { recursive: true, force: true }))
  }
})
