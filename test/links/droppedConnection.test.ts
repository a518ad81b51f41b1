/**
 * A client that goes away right after posting a link (README "Decision links"): the pair is never
 * left held. Before, a POST whose connection was reset 0-5 ms after it was written could leave
 * the pair claimed with nothing decided: the link opened as usable, and every POST of either link
 * answered 409 "The other link of this pair (approve) is deciding right now" for a minute (6 of
 * 16 resets on SQLite). Now a posted decision is carried through, or refused, as if the client
 * had stayed, and the pair is left as that says.
 */
import { connect } from "node:net"
import { afterAll, beforeAll, expect, it } from "vitest"
import { http } from "../support/process.js"
import type { BuiltGateway } from "../timeline/support.js"
import { type LinkGateway, startLinkGateway } from "./linkGateway.js"
import { acmeTask, ACME_TASKS, linksWorld } from "./world.js"

let links: LinkGateway
let gw: BuiltGateway

beforeAll(async () => {
  links = await startLinkGateway(linksWorld())
  gw = links.gw
}, 60_000)
afterAll(async () => {
  await gw?.cleanup()
})

/** Writes the page's POST on a connection of its own and resets it `afterMs` later, reading nothing. */
const postAndReset = (url: string, afterMs: number) =>
  new Promise<void>((resolve) => {
    const { hostname, pathname, port } = new URL(url)
    const body = JSON.stringify({ comments: "sent, then gone" })
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `POST ${pathname} HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\n` +
          `sec-fetch-site: same-origin\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
      )
      setTimeout(() => {
        socket.resetAndDestroy()
        resolve()
      }, afterMs)
    })
    socket.on("error", () => resolve())
  })

const confirm = (url: string) => http("POST", url, {}, { "sec-fetch-site": "same-origin" })

it("a link posted and then dropped leaves its pair decided, or usable, never held with nothing decided", async () => {
  for (let i = 0; i < ACME_TASKS; i++) {
    const taskId = acmeTask(i)
    const pair = await links.pairOf(taskId, "ann@acme.example")
    await postAndReset(pair.approveUrl, i % 6)
    // A decision under way ends within a second or two (a settle wait and a transaction; its
    // task moves on just before its pair is marked used): 409s until then. A pair left held
    // answered 409 "deciding right now" for CLAIM_TIMEOUT_MS, a minute.
    let answer = await confirm(pair.rejectUrl)
    for (const until = Date.now() + 5000; answer.status === 409 && Date.now() < until;) {
      await new Promise((r) => setTimeout(r, 100))
      answer = await confirm(pair.rejectUrl)
    }
    const step = await links.stepOf(taskId)
    if (answer.status === 200) {
      // The dropped POST decided nothing: the other link decided, as usable as before.
      expect(step, `round ${i}`).toBeNull()
    } else {
      // The dropped POST decided: the pair says it was used, with the approve link.
      expect(answer.status, `round ${i}: ${answer.status} ${JSON.stringify(answer.body)}`).toBe(410)
      expect(answer.body.message).toContain("the step was approved with it")
      expect(step).toBe("cfo_approval")
    }
  }
}, 180_000)
