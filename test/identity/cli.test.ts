/**
 * The CLI names the actor: `--actor` / SVC_ACTOR in the `--actor-header` / SVC_ACTOR_HEADER
 * header, SVC_TOKEN as a bearer token; against a server that records what arrives, and
 * against the built gateway with SVC_ACTOR_HEADER on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { stopAllProcesses, svc } from "../cli/harness.js"
import { type RunningService, startBuilt } from "../support/process.js"

describe("svc --actor", () => {
  let server: Server
  let url: string
  const seen: Array<IncomingHttpHeaders> = []
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers)
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ status: "ok" }))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  })
  afterAll(async () => {
    stopAllProcesses()
    await new Promise((resolve) => server.close(resolve))
  })

  it("sends the actor in the named header (UTF-8 bytes), before or after the command, and SVC_TOKEN as a bearer", async () => {
    const run = await svc(["--actor", "José <jose@acme.test>", "--actor-header", "X-Forwarded-Email", "--url", url, "health"], {
      env: { SVC_TOKEN: "eyJ.test.token" }
    })
    expect(run.code).toBe(0)
    const headers = seen.at(-1)!
    expect(Buffer.from(headers["x-forwarded-email"] as string, "latin1").toString("utf8")).toBe("José <jose@acme.test>")
    expect(headers["authorization"]).toBe("Bearer eyJ.test.token")

    const fromEnv = await svc(["health", "--url", url], { env: { SVC_ACTOR: "ops@acme.test", SVC_ACTOR_HEADER: "x-user" } })
    expect(fromEnv.code).toBe(0)
    expect(seen.at(-1)!["x-user"]).toBe("ops@acme.test")
    expect(seen.at(-1)!["authorization"]).toBeUndefined()

    // Without --actor nothing is sent, even with the header's name in the environment.
    expect((await svc(["health", "--url", url], { env: { SVC_ACTOR_HEADER: "x-user" } })).code).toBe(0)
    expect(seen.at(-1)!["x-user"]).toBeUndefined()
  })

  it("refuses an actor without a header name, and one the gateway would refuse, before calling", async () => {
    const before = seen.length
    const noHeader = await svc(["health", "--url", url, "--actor", "jane"])
    expect(noHeader.code).toBe(2)
    expect(noHeader.stderr).toContain("--actor-header")
    const bad = await svc(["health", "--url", url, "--actor", "agent:x", "--actor-header", "x-user"])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("agent:")
    expect(seen.length).toBe(before)
  })
})

describe("svc against a gateway that requires the actor header", () => {
  let service: RunningService
  const dir = mkdtempSync(join(tmpdir(), "identity-cli-"))
  beforeAll(async () => {
    service = await startBuilt({ SVC_DATABASE_URL: pathToFileURL(join(dir, "workspace.db")).href, SVC_ACTOR_HEADER: "x-forwarded-email" })
  }, 60_000)
  afterAll(async () => {
    await service?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it("a write without --actor is refused (401 naming the header); with it, it goes through", async () => {
    const refused = await svc(["gl", "disconnect", "--url", service.url])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("x-forwarded-email")
    expect(refused.stderr).toContain("401")
    const named = await svc(["gl", "disconnect", "--url", service.url, "--actor", "jane@example.com"], { env: { SVC_ACTOR_HEADER: "x-forwarded-email" } })
    expect(named.stderr).toBe("")
    expect(named.code).toBe(0)
  })
})
