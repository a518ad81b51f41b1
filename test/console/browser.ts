/**
 * A headless Debian chromium driven by playwright-core, for the console's browser tests. In a
 * vitest run that selects browser tests, one Chromium serves the whole run (started by
 * test/console/globalSetup.ts, given as `inject("chromiumEndpoint")`) and each `launch()` is a
 * fresh browser context of it (its own cookies, storage and pages, closed with it): a Chromium
 * start is 1-2 s of two cores per file otherwise. Elsewhere (a run naming only files that need
 * no browser, `npm run console:screenshot`) each `launch()` starts its own, on an empty
 * temporary profile removed with it. Plus the axe-core check and keyboard helpers the tests share,
 * and the start most browser tests make: the built gateway on a temporary database and a browser
 * (startGatewayAndBrowser), with a page that records the console's script errors (startConsole).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Browser as Chromium, type BrowserContext, type BrowserServer, chromium, type Page } from "playwright-core"
import { type BuiltGateway, startBuiltGateway } from "../timeline/support.js"

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

const ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-sync"
]

export interface Browser {
  readonly context: BrowserContext
  readonly close: () => Promise<void>
}

const checkInstalled = () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No chromium at ${CHROMIUM}: install Debian's \`chromium\` package (apt-get install chromium) or set CHROMIUM_PATH`)
  }
}

/** The run's Chromium (globalSetup): files connect to it over its WebSocket endpoint. */
export const launchShared = async (): Promise<BrowserServer> => {
  checkInstalled()
  return chromium.launchServer({ executablePath: CHROMIUM, headless: true, args: ARGS, host: "127.0.0.1" })
}

/** The run's Chromium's endpoint when the global set-up started one ("" otherwise, or outside vitest). */
const sharedEndpoint = async (): Promise<string> => {
  if (process.env.VITEST === undefined) return ""
  const { inject } = await import("vitest")
  return inject("chromiumEndpoint") ?? ""
}

/** This worker's connection to the run's Chromium, made on the first launch() of the file. */
let connected: Promise<Chromium> | undefined

/** `locale`: the reader's language for Intl and navigator.language (e.g. "de-DE"); the system's otherwise. */
export const launch = async (options: { readonly locale?: string } = {}): Promise<Browser> => {
  const endpoint = await sharedEndpoint()
  if (endpoint !== "") {
    connected ??= chromium.connect(endpoint)
    const context = await connected
      .then((shared) =>
        shared.newContext({
          viewport: { width: 1280, height: 900 },
          ...(options.locale !== undefined ? { locale: options.locale } : {})
        })
      )
      // The run's Chromium gone (it crashed, say): this file starts its own, as without one.
      .catch(() => undefined)
    if (context !== undefined) return { context, close: () => context.close() }
    connected = undefined
  }
  return launchOwn(options)
}

const launchOwn = async (options: { readonly locale?: string }): Promise<Browser> => {
  checkInstalled()
  const profile = mkdtempSync(join(tmpdir(), "console-chromium-"))
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      viewport: { width: 1280, height: 900 },
      ...(options.locale !== undefined ? { locale: options.locale } : {})
    })
    return {
      context,
      close: async () => {
        try {
          await context.close()
        } finally {
          rmSync(profile, { recursive: true, force: true })
        }
      }
    }
  } catch (e) {
    rmSync(profile, { recursive: true, force: true })
    throw e
  }
}

export interface GatewayAndBrowser {
  /** The built gateway (dist/main.js) on its own temporary database, bound to acme. */
  readonly gw: BuiltGateway
  readonly browser: Browser
  /** Closes the browser and stops the gateway (by its pid) and removes its database, each whatever the other does. */
  readonly close: () => Promise<void>
}

/**
 * The gateway (startBuiltGateway, with `env` on top: a seed file, identity headers) and a browser,
 * started side by side (a Chromium context and a gateway start overlap). Should either fail, the
 * other is closed and the database removed before the error is thrown: a failed start leaves no
 * process behind for the file's afterAll to miss.
 */
export const startGatewayAndBrowser = async (env: Record<string, string> = {}): Promise<GatewayAndBrowser> => {
  const [gw, browser] = await Promise.allSettled([startBuiltGateway(env), launch()])
  if (gw.status === "rejected" || browser.status === "rejected") {
    await Promise.allSettled([
      gw.status === "fulfilled" ? gw.value.cleanup() : undefined,
      browser.status === "fulfilled" ? browser.value.close() : undefined
    ])
    throw gw.status === "rejected" ? gw.reason : (browser as PromiseRejectedResult).reason
  }
  return {
    gw: gw.value,
    browser: browser.value,
    close: async () => {
      await Promise.allSettled([browser.value.close(), gw.value.cleanup()])
    }
  }
}

export interface ConsoleUnderTest extends GatewayAndBrowser {
  /** A page of the browser, on no address yet. */
  readonly page: Page
  /** The page's uncaught script errors, as they come (the tests expect none). */
  readonly errors: Array<string>
}

/**
 * startGatewayAndBrowser and a page that records its script errors. `headers`: sent with every
 * request of the browser (what an edge proxy adds: the person, their groups).
 */
export const startConsole = async (
  env: Record<string, string> = {},
  options: { readonly headers?: Record<string, string> } = {}
): Promise<ConsoleUnderTest> => {
  const started = await startGatewayAndBrowser(env)
  try {
    if (options.headers !== undefined) await started.browser.context.setExtraHTTPHeaders(options.headers)
    const page = await started.browser.context.newPage()
    const errors: Array<string> = []
    page.on("pageerror", (e) => errors.push(e.message))
    return { ...started, page, errors }
  } catch (e) {
    await started.close()
    throw e
  }
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

export interface Violation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly targets: ReadonlyArray<string>
}

/**
 * axe-core's serious and critical violations on the page as it is now. Injected by evaluation
 * (the console's CSP refuses inline scripts, rightly), so the page keeps its real policy.
 */
export const seriousViolations = async (page: Page): Promise<ReadonlyArray<Violation>> => {
  await page.evaluate(AXE_SOURCE)
  return page.evaluate(`(async () => {
    const result = await axe.run(document, { resultTypes: ["violations"] })
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => String(n.target)) }))
  })()`)
}

/** Presses Tab until the focused element's text (aria-label, label, content) matches, at most `limit` times. */
export const tabTo = async (page: Page, text: RegExp, limit = 40): Promise<void> => {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press("Tab")
    const focused = await page.evaluate(`(() => {
      const el = document.activeElement
      if (el === null) return ""
      const label = el.id !== "" ? (document.querySelector('label[for="' + el.id + '"]')?.textContent ?? "") : ""
      return ((el.getAttribute("aria-label") ?? "") + " " + label + " " + (el.textContent ?? "")).trim()
    })()`) as string
    if (text.test(focused)) return
  }
  throw new Error(`no focusable element matching ${text} within ${limit} tabs`)
}
