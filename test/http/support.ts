/**
 * Requests the typed and Effect HTTP clients will not send as-is (any method, malformed
 * percent-encoding, hundreds of headers), with node:http straight to the server in context.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as http from "node:http"
import { serverPort } from "../support/gateway.js"

export { serverPort }

export interface NodeResponse {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly text: string
  readonly body: any
}

export const requestTo = (
  port: number,
  method: string,
  path: string,
  options: { readonly headers?: Record<string, string>; readonly body?: string } = {}
): Promise<NodeResponse> =>
  new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method, path, headers: options.headers, agent: false }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        let body: unknown = undefined
        try {
          body = text === "" ? undefined : JSON.parse(text)
        } catch {
          body = undefined
        }
        resolve({ status: res.statusCode!, headers: res.headers, text, body })
      })
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(options.body)
  })

/** A request to the HttpServer in context. */
export const send = (
  method: string,
  path: string,
  options: { readonly headers?: Record<string, string>; readonly body?: string } = {}
) => Effect.flatMap(serverPort, (port) => Effect.promise(() => requestTo(port, method, path, options)))

/** The spec's error body, exactly. */
export const errorBody = (status: number, error: string) => ({ statusCode: status, error, message: expect.any(String) })
