/**
 * The gateway (GatewayApi, every /v1 operation) on the real HTTP stack over the in-memory
 * workspace with test/fixtures/example.json, held to the OpenAPI document it serves at
 * /openapi.json. Events need a key here, so the 401 path is exercised too.
 */
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { readFileSync } from "node:fs"
import { GatewayApi } from "../../src/api/Api.js"
import { defaultConfig, makeGateway, serverPort } from "../support/gateway.js"
import { DOMAIN_HINTS, hintsFromFixture, mergeHints, stringsOf } from "./arbitraries.js"
import { contractSuite } from "./suite.js"

const fixture = JSON.parse(readFileSync(new URL("../fixtures/example.json", import.meta.url), "utf8")) as unknown
const EVENTS_KEY = "contract-suite-events-key"
const fromFixture = hintsFromFixture(fixture)

contractSuite({
  name: "gateway",
  api: GatewayApi,
  maxBodyBytes: defaultConfig.maxBodyBytes,
  arbitraries: {
    hints: mergeHints(fromFixture, DOMAIN_HINTS, {
      documentRef: fromFixture.documentId ?? [],
      "x-svc-events-key": [EVENTS_KEY]
    }),
    strings: stringsOf(fixture)
  },
  // Routes beside the API (src/gateway/Gateway.ts): the console, the documents and the probes,
  // as the router matches them (case, doubled and trailing slashes ignored).
  servedBeside: (path) => {
    const routed = path.toLowerCase().replace(/\/{2,}/g, "/").replace(/(.)\/$/, "$1")
    return ["/", "/docs", "/openapi.json", "/readyz", "/metrics", "/mcp"].includes(routed) || /^\/console\/[^/]+$/.test(routed)
  },
  start: async () => {
    const { layer } = makeGateway({ config: { eventsKey: Option.some(Redacted.make(EVENTS_KEY)) } })
    const runtime = ManagedRuntime.make(layer)
    const baseUrl = await runtime.runPromise(Effect.map(serverPort, (port) => `http://127.0.0.1:${port}`))
    const document = await (await fetch(`${baseUrl}/openapi.json`)).json()
    return { baseUrl, document, close: () => runtime.dispose() }
  }
})
