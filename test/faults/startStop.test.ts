/**
 * The gateway's Node server between listening and serving: "starting up" only while starting
 * (it was also the answer to every request after SIGTERM).
 */
import { describe, expect, it } from "vitest"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { createGatewayServer } from "../../src/http/server/nodeServer.js"

const get = (port: number) =>
  new Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    http.get({ host: "127.0.0.1", port, path: "/v1/health", agent: false }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (d: string) => (text += d))
      res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(text), headers: res.headers }))
    }).on("error", reject)
  })

describe("the Node server before and after the application", () => {
  it("503 'Starting up' (Retry-After) before it is attached; 503 'Shutting down' (Connection: close) after it is detached", async () => {
    const server = createGatewayServer(1024)
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as AddressInfo
    try {
      const early = await get(port)
      expect(early.status).toBe(503)
      expect(early.body).toEqual({ statusCode: 503, message: "Starting up; retry shortly", error: "Service Unavailable" })
      expect(early.headers["retry-after"]).toBe("1")

      const app = (_req: http.IncomingMessage, res: http.ServerResponse) => res.end(JSON.stringify({ status: "ok" }))
      server.on("request", app)
      expect((await get(port)).status).toBe(200)

      server.off("request", app)
      const late = await get(port)
      expect(late.status).toBe(503)
      expect(late.body).toEqual({ statusCode: 503, message: "Shutting down", error: "Service Unavailable" })
      expect(late.headers.connection).toBe("close")
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
