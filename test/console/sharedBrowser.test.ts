/**
 * The run's one Chromium (./globalSetup.ts, ./browser.ts): a run selecting browser tests starts
 * it, each launch() is a context of it, and contexts share nothing a page keeps (storage,
 * cookies), as separate Chromiums did.
 */
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { type Browser, launch } from "./browser.js"

let server: Server
let url = ""
const opened: Array<Browser> = []
beforeAll(async () => {
  server = createServer((_, res) => res.writeHead(200, { "content-type": "text/html" }).end("<title>t</title>"))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`
})
afterAll(async () => {
  await Promise.allSettled(opened.map((b) => b.close()))
  server.close()
})

describe("the run's Chromium", () => {
  it("is started by the global set-up, and each launch() is a fresh context of it", async () => {
    expect(inject("chromiumEndpoint")).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\//)
    const [a, b] = await Promise.all([launch(), launch({ locale: "de-DE" })])
    opened.push(a, b)
    // A context of a connected browser (a Chromium of its own per launch is a persistent context, with none).
    expect(a.context.browser()).not.toBeNull()
    expect(a.context.browser()).toBe(b.context.browser())

    const [pa, pb] = await Promise.all([a.context.newPage(), b.context.newPage()])
    await Promise.all([pa.goto(url), pb.goto(url)])
    await pa.evaluate(`localStorage.setItem("k", "a"); document.cookie = "c=a"`)
    expect(await pb.evaluate(`[localStorage.getItem("k"), document.cookie]`)).toEqual([null, ""])
    expect(await pb.evaluate(`new Intl.NumberFormat().format(1.5)`)).toBe("1,5")
    expect(await pa.evaluate(`[localStorage.getItem("k"), document.cookie]`)).toEqual(["a", "c=a"])

    // Closing one context leaves the other working.
    await a.close()
    expect(await pb.title()).toBe("t")
  })
})
