/**
 * On the built process: a stored document is served so that a browser neither
 * sniffs it into something else nor runs it as a page of the gateway's origin.
 */
import { describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { builtGatewayOfFile } from "./builtGateway.js"

const gw = builtGatewayOfFile()

const upload = async (taskId: string, fileName: string, contentType: string, body: string) => {
  const res = await http("POST", `${gw.url}/v1/tasks/${taskId}/files`, {
    source: "s",
    fileName,
    contentType,
    data: Buffer.from(body).toString("base64")
  })
  expect(res.status, res.text).toBe(201)
  return res.body as { documentRef: string; downloadUrl: string }
}

describe("downloads", { timeout: 60_000 }, () => {
  it("carry nosniff and a sandboxing CSP, whatever the stored type", async () => {
    const taskId = await gw.newTask()
    const html = "<html><script>parent.postMessage(document.cookie, '*')</script></html>"
    for (const [name, type] of [["page.html", "text/html"], ["image.svg", "image/svg+xml"], ["a.pdf", "application/pdf"]] as const) {
      const doc = await upload(taskId, name, type, html)
      const res = await fetch(`${gw.url}/v1/tasks/${taskId}/files/${doc.documentRef}/download`)
      expect(res.status).toBe(200)
      expect(await res.text()).toBe(html)
      expect(res.headers.get("content-type")).toBe(type)
      expect(res.headers.get("x-content-type-options")).toBe("nosniff")
      const csp = res.headers.get("content-security-policy") ?? ""
      const directives = csp.split(";").map((d) => d.trim())
      // `sandbox` with no tokens: no scripts, no same origin, no forms, no popups.
      expect(directives, csp).toContain("sandbox")
      expect(directives, csp).toContain("default-src 'none'")
      expect(res.headers.get("content-disposition")).toMatch(/^attachment; /)
    }
  })
})
