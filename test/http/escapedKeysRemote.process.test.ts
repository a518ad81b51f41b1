/**
 * Escaped object keys through a gateway over a workspace service (SVC_WORKSPACE_URL): the front
 * reads the service's answers with its HTTP client's JSON.parse, which V8's key bug (Node 24:
 * src/api/jsonParse.ts) misreads once the process has parsed a text with a backslash key, so a
 * timeline read through the front served `{"h":1,"\\":2}` for the `{"h":1,"\"":2}` that was stored.
 * The built process reads every JSON text around the bug (src/lib/jsonParseFix.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { exampleFixture } from "../support/gateway.js"
import { EXPENSE_TASK } from "../support/world.js"
import { type RemoteGateways, startRemoteGateways } from "../timeline/support.js"

const ADMIN_TOKEN = "escaped-keys-remote-admin-token-0123456789"
let gateways: RemoteGateways | undefined

beforeAll(async () => {
  gateways = await startRemoteGateways(ADMIN_TOKEN, exampleFixture)
}, 90_000)

afterAll(async () => {
  await gateways?.stop()
})

const event = async (seq: number, payload: string) => {
  const res = await fetch(`${gateways!.remote.url}/v1/tasks/${EXPENSE_TASK}/events`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: `{"type":"note","source":"keys","seq":${seq},"payload":${payload}}`
  })
  return { status: res.status, text: await res.text() }
}

/** The timeline as the front serves it, as text (this process's own JSON.parse would misread it too). */
const served = async () => (await fetch(`${gateways!.remote.url}/v1/tasks/${EXPENSE_TASK}/events?limit=1000`)).text()

describe("escaped keys read back through a gateway over a workspace service", () => {
  it("are served as stored, after the front has read a backslash key", async () => {
    expect((await event(1, String.raw`{"h":[],"\\":0}`)).status).toBe(200)
    // The front reads the primer back through its HTTP client: the transition the bug reads through.
    expect(await served()).toContain(String.raw`"payload":{"h":[],"\\":0}`)
    expect((await event(2, String.raw`{"h":1,"\"":2}`)).status).toBe(200)
    expect((await event(3, String.raw`{"h":[],"\t":3}`)).status).toBe(200)
    const text = await served()
    expect(text).toContain(String.raw`"payload":{"h":1,"\"":2}`)
    expect(text).toContain(String.raw`"payload":{"h":[],"\t":3}`)
  })
})
