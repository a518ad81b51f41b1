/**
 * One memory-reducing collection after the server has gone idle (src/http/server/nodeServer.ts
 * collectWhenIdle), which npm start relies on instead of V8's memory reducer.
 */
import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { setTimeout as sleep } from "node:timers/promises"
import { collectWhenIdle } from "../../src/http/server/nodeServer.js"

const get = (port: number) =>
  new Promise<number>((resolve, reject) => {
    http.get({ host: "127.0.0.1", port, path: "/", agent: false }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
    }).on("error", reject)
  })

describe("a collection once the server is idle", () => {
  it("runs once per idle period that follows requests, never while requests keep coming", async () => {
    // The idle period is 8x the gap between requests: at 150 ms, a loaded machine (two suites side
    // by side) stretched a 50 ms gap past it once, and a collection ran between requests.
    const IDLE_MS = 400
    const server = http.createServer((_req, res) => res.end("ok"))
    let collections = 0
    const noteRequest = collectWhenIdle(server, () => collections++, IDLE_MS)
    server.on("request", noteRequest)
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as AddressInfo).port
    try {
      // A fresh server has nothing to give back.
      await sleep(IDLE_MS * 2)
      expect(collections).toBe(0)
      // Requests every 50 ms for 800 ms: never idle for IDLE_MS.
      for (let i = 0; i < 16; i++) {
        expect(await get(port)).toBe(200)
        await sleep(50)
      }
      expect(collections).toBe(0)
      await sleep(IDLE_MS * 3)
      expect(collections).toBe(1)
      // Still idle: no second collection.
      await sleep(IDLE_MS * 2)
      expect(collections).toBe(1)
      await get(port)
      await sleep(IDLE_MS * 3)
      expect(collections).toBe(2)
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })

  it("under --expose-gc the collection is the memory-reducing one, which gives a burst's pages back", async () => {
    const calls: Array<unknown> = []
    vi.stubGlobal("gc", (options: unknown) => calls.push(options))
    const server = http.createServer((_req, res) => res.end("ok"))
    try {
      const noteRequest = collectWhenIdle(server, undefined, 100)
      server.on("request", noteRequest)
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      expect(await get((server.address() as AddressInfo).port)).toBe(200)
      await sleep(300)
      expect(calls).toEqual([{ type: "major", execution: "sync", flavor: "last-resort" }])
    } finally {
      vi.unstubAllGlobals()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })

  it("without --expose-gc (no collector) nothing is scheduled and requests are only counted", async () => {
    const server = http.createServer()
    const note = collectWhenIdle(server, undefined, 10)
    note()
    await sleep(50)
    // No timer was left behind: the server closes without one to clear.
    expect(server.listenerCount("close")).toBe(0)
  })
})
