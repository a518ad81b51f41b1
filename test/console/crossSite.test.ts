/**
 * In a real browser: a page on another site tries every write a page can send
 * without a CORS preflight (a `no-cors` fetch with a Blob body, `navigator.sendBeacon`, a form
 * post with the `text/plain` JSON trick, a body-less form post) against approve, upload, ingest,
 * the raw upload, create and a row reject, and a DELETE of the GL connection; the gateway (the built process,
 * `npm start`) sees every one of them and refuses it, and nothing the API shows changes. Run
 * from another site (127.0.0.2, cross-site) and from this host on another port (same-site).
 * A page on an origin listed in SVC_CORS_ORIGINS then writes with a preflighted JSON fetch, and
 * that works.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allStarted, freePort, http, type RunningService, startBuilt } from "../support/process.js"
import { type Browser, launch } from "./browser.js"

const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const REVIEW_TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"
const UPLOAD_TASK = "1f3a5c7e-9b2d-4f60-8a1c-3e5b7d9f1a20"
const ROW = "7a9c1e35-6b8d-4f0a-8c2e-5d7f9b1d3f86"
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

const fileMeta = { source: "receipts", fileName: "r.png", contentType: "image/png", signalTaskId: UPLOAD_TASK, signalName: "file_submitted" }

/**
 * What the hostile page aims at: the JSON that would do harm, and for the form trick a field
 * name and value whose `text/plain` encoding (`name=value\r\n`) is that JSON exactly.
 */
const TARGETS = [
  {
    path: `/v1/tasks/${REVIEW_TASK}/action`,
    json: JSON.stringify({ type: "approved" }),
    form: ["{\"type\":\"approved\",\"comments\":\"", "\"}"]
  },
  {
    path: `/v1/tasks/${UPLOAD_TASK}/files`,
    json: JSON.stringify({ ...fileMeta, data: PNG }),
    form: [JSON.stringify({ ...fileMeta, data: PNG }).slice(0, -1) + ",\"schemaSlug\":\"", "\"}"]
  },
  {
    path: `/v1/tasks/${UPLOAD_TASK}/files/ingest`,
    json: JSON.stringify({ ...fileMeta, fileRef: { provider: "inline_base64", data: PNG } }),
    form: [JSON.stringify({ ...fileMeta, fileRef: { provider: "inline_base64", data: PNG } }).slice(0, -1) + ",\"schemaSlug\":\"", "\"}"]
  },
  {
    path: `/v1/entities/${ACME_US}/tasks`,
    json: JSON.stringify({ workflowId: "expense-review", context: { period: "2026-12" } }),
    form: ["{\"workflowId\":\"expense-review\",\"context\":{\"period\":\"2026-12\"},\"x\":\"", "\"}"]
  },
  { path: `/v1/subledgers/expenses/${ROW}/reject`, json: undefined, form: undefined },
  // The raw upload: its body is any type, so only its required header (x-svc-upload) keeps these out.
  {
    path: `/v1/tasks/${UPLOAD_TASK}/files/raw?${new URLSearchParams({ source: "receipts", fileName: "r.png", signalTaskId: UPLOAD_TASK, signalName: "file_submitted" })}`,
    json: "\u0089PNG not really",
    form: ["data", "\u0089PNG not really"]
  }
] as const
/** As the request log shows them: without the query. */
const TARGET_PATHS = new Set<string>([...TARGETS.map((t) => t.path.split("?", 1)[0]!), "/v1/gl"])

/** The hostile page: every write it can send without a preflight; reports how many reached the server. */
const attackPage = `<!doctype html><meta charset="utf-8"><title>cute cats</title><body><script>
const gw = new URLSearchParams(location.search).get("gw")
const targets = ${JSON.stringify(TARGETS)}
let delivered = 0, beacons = 0
const errors = []
const tryFetch = async (url, init) => {
  try { await fetch(url, init); delivered++ } catch (e) { errors.push(init.method + " " + url + ": " + e) }
}
const submitForm = (action, fields, enctype) => new Promise((resolve) => {
  const name = "f" + Math.random().toString(36).slice(2)
  const frame = document.createElement("iframe")
  frame.name = name
  document.body.append(frame)
  const form = document.createElement("form")
  form.method = "POST"; form.action = action; form.target = name
  if (enctype) form.enctype = enctype
  for (const [n, v] of fields) {
    const input = document.createElement("input")
    input.type = "hidden"; input.name = n; input.value = v
    form.append(input)
  }
  document.body.append(form)
  frame.addEventListener("load", () => { delivered++; resolve() }, { once: true })
  setTimeout(resolve, 5000)
  form.submit()
})
window.attack = async () => {
  for (const t of targets) {
    const url = gw + t.path
    // A Blob without a type: the request carries no Content-Type at all.
    await tryFetch(url, { method: "POST", mode: "no-cors", credentials: "include", ...(t.json ? { body: new Blob([t.json]) } : {}) })
    if (t.json) await tryFetch(url, { method: "POST", mode: "no-cors", body: t.json }) // text/plain
    // A JSON type is not one no-cors may set: the browser drops it (the body goes as text/plain).
    if (t.json) await tryFetch(url, { method: "POST", mode: "no-cors", headers: { "content-type": "application/json" }, body: t.json })
    if (navigator.sendBeacon(url, t.json ? new Blob([t.json]) : undefined)) beacons++
    if (t.json && navigator.sendBeacon(url, t.json)) beacons++
    await submitForm(url, t.form ? [t.form] : [], t.form ? "text/plain" : undefined)
  }
  // GL disconnect: a no-cors DELETE is refused by the browser itself, a cors one needs a
  // preflight this origin does not pass; a form can only GET or POST.
  await tryFetch(gw + "/v1/gl", { method: "DELETE", mode: "no-cors" })
  await tryFetch(gw + "/v1/gl", { method: "DELETE" })
  await tryFetch(gw + "/v1/gl", { method: "POST", mode: "no-cors" })
  await submitForm(gw + "/v1/gl", [], undefined)
  return { delivered, beacons, errors }
}
</script>`

/** A page on a listed origin: a proper JSON fetch (preflighted), and a no-cors Blob post. */
const friendlyPage = `<!doctype html><meta charset="utf-8"><title>partner app</title><body><script>
const gw = new URLSearchParams(location.search).get("gw")
window.write = async (path, json) => {
  const res = await fetch(gw + path, { method: "POST", headers: { "content-type": "application/json" }, body: json })
  return { status: res.status, body: await res.json() }
}
window.raw = async (path, text) => {
  const res = await fetch(gw + path, { method: "POST", headers: { "content-type": "image/png", "x-svc-upload": "raw" }, body: text })
  return { status: res.status, body: await res.json() }
}
window.blob = async (path, json) => {
  await fetch(gw + path, { method: "POST", mode: "no-cors", body: new Blob([json]) })
}
</script>`

const serve = (host: string, port: number, html: string) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
      res.end(html)
    })
    server.once("error", reject)
    server.listen(port, host, () => resolve(server))
  })

let dir: string
let gw: RunningService | undefined
let browser: Browser | undefined
const servers: Array<Server> = []
let crossSite: string
let sameSite: string
let listed: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "cross-site-browser-"))
  const [p1, p2, p3] = [await freePort(), await freePort(), await freePort()]
  // 127.0.0.2 is another site than 127.0.0.1 (an IP address is its own site); 127.0.0.1 on
  // another port is the same site, another origin.
  crossSite = `http://127.0.0.2:${p1}`
  sameSite = `http://127.0.0.1:${p2}`
  listed = `http://127.0.0.3:${p3}`
  servers.push(
    await serve("127.0.0.2", p1, attackPage),
    await serve("127.0.0.1", p2, attackPage),
    await serve("127.0.0.3", p3, friendlyPage)
  )
  await allStarted([
    startBuilt({ SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`, SVC_CORS_ORIGINS: listed, SVC_LOG_FORMAT: "json" }).then((s) => (gw = s)),
    launch().then((b) => (browser = b))
  ])
}, 90_000)
afterAll(async () => {
  await Promise.allSettled([browser?.close(), gw?.stop(), ...servers.map((s) => new Promise((r) => s.close(r)))])
  rmSync(dir, { recursive: true, force: true })
})

/** Everything the API shows that one of the writes could change. */
const state = async () => {
  const paths = [
    `/v1/tasks/${REVIEW_TASK}/ui`,
    `/v1/tasks/${UPLOAD_TASK}/ui`,
    `/v1/tasks/${UPLOAD_TASK}/files`,
    `/v1/entities/${ACME_US}/tasks`,
    `/v1/tasks/${REVIEW_TASK}/events`,
    `/v1/tasks/${UPLOAD_TASK}/events`,
    "/v1/gl/status"
  ]
  const answers = await Promise.all(paths.map((p) => http("GET", gw!.url + p)))
  for (const a of answers) expect(a.status).toBe(200)
  return Object.fromEntries(paths.map((p, i) => [p, answers[i]!.body]))
}

interface RequestLine {
  readonly msg: string
  readonly method: string
  readonly path: string
  readonly status: number
}

/** The gateway's request log lines for writes to the targets. */
const writesLogged = (): Array<RequestLine> =>
  gw!.output().split("\n").flatMap((line) => {
    try {
      const l = JSON.parse(line) as RequestLine
      return l.msg === "request" && l.method !== "GET" && l.method !== "OPTIONS" && TARGET_PATHS.has(l.path) ? [l] : []
    } catch {
      return []
    }
  })

const until = async (check: () => boolean, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
}

/** Opens the hostile page on `origin`, runs its attacks, waits until the gateway saw them all. */
const attackFrom = async (origin: string) => {
  const page: Page = await browser!.context.newPage()
  const fetchSites: Array<string> = []
  page.on("request", (request) => {
    if (request.url().startsWith(gw!.url)) {
      void request.allHeaders().then((h) => fetchSites.push(h["sec-fetch-site"] ?? "(none)"), () => {})
    }
  })
  try {
    const seenBefore = writesLogged().length
    await page.goto(`${origin}/attack.html?gw=${encodeURIComponent(gw!.url)}`)
    const report = await page.evaluate("window.attack()") as { delivered: number; beacons: number; errors: Array<string> }
    // Every fetch and form answered, every beacon queued: the gateway must have logged them all.
    const expected = report.delivered + report.beacons
    await until(() => writesLogged().length - seenBefore >= expected, 15_000)
    const seen = writesLogged().slice(seenBefore)
    return { report, expected, seen, fetchSites }
  } finally {
    await page.close()
  }
}

describe("writes from a page on another site, in Chromium", { timeout: 120_000 }, () => {
  it("no-cors fetch, sendBeacon and form posts from another site reach the gateway, are refused, and change nothing", async () => {
    const before = await state()
    for (const [origin, site] of [[crossSite, "cross-site"], [sameSite, "same-site"]] as const) {
      const { report, expected, seen, fetchSites } = await attackFrom(origin)
      // The page really sent them: 5 targets x 3 fetches and a form, the reject's fetch and form,
      // the GL's POST fetch and form (its two DELETEs never leave the browser), and 11 beacons.
      expect(report.beacons, JSON.stringify(report)).toBe(11)
      expect(report.delivered, JSON.stringify(report)).toBe(24)
      // The browser itself refused the DELETEs (no-cors forbids it; the preflight failed).
      expect(report.errors.filter((e) => e.startsWith("DELETE")).length, JSON.stringify(report.errors)).toBe(2)
      expect(seen.length, JSON.stringify(seen)).toBeGreaterThanOrEqual(expected)
      expect(fetchSites).toContain(site)
      // Each one answered 403 by the cross-site rule (none of them reached a handler).
      expect(seen.filter((l) => l.status !== 403).map((l) => `${origin}: ${l.method} ${l.path} ${l.status}`)).toEqual([])
      expect(seen.some((l) => l.method === "DELETE"), "no DELETE ever left the browser").toBe(false)
    }
    expect(await state()).toEqual(before)
  })

  it("a page on an origin listed in SVC_CORS_ORIGINS writes with a JSON fetch; a typeless body from it is still refused", async () => {
    const page = await browser!.context.newPage()
    try {
      await page.goto(`${listed}/app.html?gw=${encodeURIComponent(gw!.url)}`)
      const before = await state()
      const create = TARGETS[3]
      await page.evaluate(`window.blob(${JSON.stringify(create.path)}, ${JSON.stringify(create.json)})`)
      await until(() => writesLogged().some((l) => l.path === create.path && l.status === 415), 10_000)
      expect(writesLogged().filter((l) => l.path === create.path).at(-1)?.status).toBe(415)
      expect(await state()).toEqual(before)

      // The raw upload from a listed origin without its header (what a no-cors fetch is): 403.
      const raw = TARGETS[5]
      await page.evaluate(`window.blob(${JSON.stringify(raw.path)}, ${JSON.stringify(raw.json)})`)
      const rawPath = raw.path.split("?", 1)[0]!
      await until(() => writesLogged().some((l) => l.path === rawPath), 10_000)
      expect(writesLogged().filter((l) => l.path === rawPath).at(-1)?.status).toBe(403)
      expect(await state()).toEqual(before)

      const approve = TARGETS[0]
      const answer = await page.evaluate(`window.write(${JSON.stringify(approve.path)}, ${JSON.stringify(approve.json)})`)
      expect(answer).toEqual({ status: 200, body: { ok: true } })
      const after = await state()
      expect(after[`/v1/tasks/${REVIEW_TASK}/ui`].step.id).not.toBe(before[`/v1/tasks/${REVIEW_TASK}/ui`].step.id)

      // With its header (the preflight allows it), the listed page's raw upload is stored.
      const uploaded = await page.evaluate(`window.raw(${JSON.stringify(raw.path)}, ${JSON.stringify(raw.json)})`) as { status: number; body: { filename: string } }
      expect(uploaded.status, JSON.stringify(uploaded)).toBe(201)
      expect(uploaded.body.filename).toBe("r.png")
    } finally {
      await page.close()
    }
  })
})
