/**
 * Sends generated requests over a real socket and judges every answer against the published
 * document. A failure is recorded (request that reproduces it, answer, what is wrong) and the
 * run goes on, so one run reports every distinct failure instead of the first one.
 *
 * Judgement, for every answer:
 * 1. below 500 (no input may produce a server error);
 * 2. status, Content-Type and body as the document declares for the operation;
 * 3. a request that departs from the document (its parameters, media type or body schema) is
 *    not accepted with a 2xx.
 */
import * as fc from "fast-check"
import { request as httpRequest } from "node:http"
import { bodyBytes, type Operation, type RequestShape } from "./arbitraries.js"
import type { Contract, DecodedRequest, WireResponse } from "./openapiValidator.js"

/** Runs per operation: `CONTRACT_RUNS` (e.g. 5000 for a long run), default 100. */
export const RUNS = Number(process.env.CONTRACT_RUNS ?? "") > 0 ? Number(process.env.CONTRACT_RUNS) : 100
/**
 * The seed: fixed by default so that `npm test` (and CI) is repeatable; `CONTRACT_SEED=<n>`
 * replays a run, `CONTRACT_SEED=random` explores new cases (run it often; fix what it finds).
 */
export const SEED = process.env.CONTRACT_SEED === "random"
  ? Math.floor(Math.random() * 2 ** 31)
  : Number.isInteger(Number(process.env.CONTRACT_SEED ?? "x"))
  ? Number(process.env.CONTRACT_SEED)
  : 20261123

export interface Wire {
  readonly method: string
  /** Path and query, as sent. */
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: Buffer | undefined
}

export const toWire = (r: RequestShape): Wire => {
  const path = r.operation.path.replace(/:(\w+)\??/g, (_, name: string) => r.path[name] ?? "")
  const query = r.query.map(([k, v]) => `${k}=${v}`).join("&")
  const headers: Record<string, string> = { ...r.headers }
  let body: Buffer | undefined
  if (r.body !== undefined) {
    const { bytes, contentType } = bodyBytes(r.body)
    body = bytes
    if (contentType !== undefined) headers["content-type"] = contentType
  }
  return { method: r.method, url: query === "" ? path : `${path}?${query}`, headers, body }
}

const safeDecode = (s: string): string | undefined => {
  try {
    return decodeURIComponent(s)
  } catch {
    return undefined
  }
}

/** The request as the document describes requests: decoded path and query values. */
export const decodeRequest = (r: RequestShape, wire: Wire): DecodedRequest => ({
  method: r.method,
  template: r.operation.template,
  pathParams: Object.fromEntries(r.operation.pathParams.map((p) => {
    const raw = r.path[p] ?? ""
    // A value that spans several segments (an encoded `/` decodes, a raw one does not) cannot be this parameter.
    return [p, raw.includes("/") ? undefined : safeDecode(raw)]
  })),
  query: r.query.map(([k, v]) => [safeDecode(k.replace(/\+/g, " ")) ?? k, safeDecode(v.replace(/\+/g, " "))] as const),
  // A field value as the server has it: whitespace around it is not part of it (RFC 9110 5.5), so
  // "894 " on the wire is the value "894".
  headers: Object.fromEntries(Object.entries(wire.headers).map(([k, v]) => [k, v.replace(/^[ \t]+|[ \t]+$/g, "")])),
  contentType: wire.headers["content-type"],
  body: wire.body
})

/** A loopback server that has not answered in this long will not: recorded as "no answer". */
export const ANSWER_TIMEOUT_MS = 3_000

export interface Answer extends WireResponse {
  readonly error?: string
}

/** One request on its own connection (a server may close a connection after a 413). */
export const send = (baseUrl: string, wire: Wire, timeoutMs = ANSWER_TIMEOUT_MS): Promise<Answer> =>
  new Promise((resolve) => {
    const url = new URL(baseUrl)
    const headers: Record<string, string> = { ...wire.headers, connection: "close" }
    if (wire.body !== undefined) headers["content-length"] = String(wire.body.length)
    let done = false
    const finish = (a: Answer) => {
      if (!done) {
        done = true
        resolve(a)
      }
    }
    const req = httpRequest({
      host: url.hostname,
      port: url.port,
      method: wire.method,
      path: wire.url,
      // The path goes out as generated (percent-encoded, possibly malformed on purpose).
      headers
    }, (res) => {
      const chunks: Array<Buffer> = []
      const h: Record<string, string> = {}
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h[k] = Array.isArray(v) ? v.join(", ") : v
      res.on("data", (c: Buffer) => {
        chunks.push(c)
        // An event stream does not end: its answer is what the first chunk says.
        if ((h["content-type"] ?? "").startsWith("text/event-stream")) {
          finish({ status: res.statusCode ?? 0, headers: h, bytes: Buffer.concat(chunks) })
          req.destroy()
        }
      })
      res.on("end", () => finish({ status: res.statusCode ?? 0, headers: h, bytes: Buffer.concat(chunks) }))
      res.on("error", (e) => finish({ status: 0, headers: {}, bytes: Buffer.alloc(0), error: `response error: ${e.message}` }))
    })
    req.setTimeout(timeoutMs, () => {
      finish({ status: 0, headers: {}, bytes: Buffer.alloc(0), error: `no answer within ${timeoutMs} ms` })
      req.destroy()
    })
    req.on("error", (e: NodeJS.ErrnoException) => finish({ status: 0, headers: {}, bytes: Buffer.alloc(0), error: `connection error: ${e.code ?? e.message}` }))
    if (wire.body !== undefined) req.end(wire.body)
    else req.end()
  })

export interface Finding {
  readonly operation: string
  readonly kind: "server-error" | "no-answer" | "off-contract" | "accepted-nonconforming" | "accepted-hostile"
  readonly label: string
  readonly request: string
  readonly answer: string
  readonly problems: ReadonlyArray<string>
  count: number
}

const printable = (s: string, n: number) => {
  const cut = s.length > n ? s.slice(0, n) : s
  const text = JSON.stringify(cut).slice(1, -1)
  return s.length > n ? `${text}… (${s.length} chars)` : text
}

export const describeRequest = (wire: Wire): string => {
  const headers = Object.entries(wire.headers).map(([k, v]) => `${k}: ${printable(v, 60)}`).join("; ")
  const body = wire.body === undefined ? "" : ` body(${wire.body.length} B)=${printable(wire.body.toString("utf8"), 160)}`
  return `${wire.method} ${printable(wire.url, 200)}${headers === "" ? "" : ` [${headers}]`}${body}`
}

export const describeAnswer = (a: Answer): string =>
  a.error !== undefined
    ? a.error
    : `${a.status} [content-type: ${a.headers["content-type"] ?? "-"}] ${printable(a.bytes.toString("utf8"), 240)}`

/** What a problem says, without the values that vary from request to request. */
const signature = (problem: string) =>
  problem.replace(/"(?:[^"\\]|\\.)*"/g, "\"…\"").replace(/\d+/g, "#").slice(0, 100)

/** Collected findings, deduplicated by operation, kind, status and what is wrong (the first example is kept). */
export class Findings {
  readonly byKey = new Map<string, Finding>()
  add(f: Omit<Finding, "count">, status: number) {
    const key = [f.operation, f.kind, status, ...f.problems.map(signature)].join("|")
    const seen = this.byKey.get(key)
    if (seen !== undefined) seen.count++
    else this.byKey.set(key, { ...f, count: 1 })
  }
  get all(): ReadonlyArray<Finding> {
    return [...this.byKey.values()]
  }
}

export const formatFindings = (findings: ReadonlyArray<Finding>): string =>
  findings.map((f, i) =>
    `${i + 1}. [${f.kind}] ${f.operation} (${f.label}, seen ${f.count}x)\n` +
    `   request: ${f.request}\n` +
    `   answer:  ${f.answer}\n` +
    (f.problems.length > 0 ? `   wrong:   ${f.problems.join(" | ")}\n` : "")
  ).join("")

/**
 * What in a JSON body DESIGN.md says the decode step refuses, although the document (whose
 * free-form fields take any JSON) cannot say so: nesting deeper than `maxDepth` containers, a
 * `__proto__` key, a NUL or an unpaired surrogate in a key or a string. Judged on the body as
 * sent, so a later mutation that removed an earlier one's damage is not counted. Bodies that are
 * not UTF-8 JSON are the document's business (they do not conform to it).
 */
export const hostileContent = (wire: Wire, maxDepth: number): ReadonlyArray<string> => {
  const essence = (wire.headers["content-type"] ?? "").split(";", 1)[0]!.trim().toLowerCase()
  if (wire.body === undefined || wire.body.length === 0 || !/^application\/(?:[\w.!#$&^-]+\+)?json$/.test(essence)) return []
  let value: unknown
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(wire.body))
  } catch {
    return []
  }
  const found = new Set<string>()
  const text = (s: string, what: string) => {
    if (s.includes("\u0000")) found.add(`NUL in a ${what}`)
    if (/[\uD800-\uDFFF]/u.test(s)) found.add(`unpaired surrogate in a ${what}`)
  }
  const stack: Array<readonly [unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!
    if (typeof v === "string") text(v, "string")
    if (v === null || typeof v !== "object") continue
    if (depth + 1 > maxDepth) {
      found.add(`nesting deeper than ${maxDepth}`)
      continue
    }
    for (const [k, child] of Object.entries(v)) {
      if (!Array.isArray(v)) {
        if (k === "__proto__") found.add("a __proto__ key")
        text(k, "key")
      }
      stack.push([child, depth + 1])
    }
  }
  return [...found]
}

/** A documented exception to "below 500" (e.g. 501 from a server built without an optional part). */
export type Allow5xx = (status: number, r: RequestShape, contract: Contract) => boolean

/** Judges one exchange; returns what is wrong (empty when it is fine). */
export const judge = (
  contract: Contract,
  r: RequestShape,
  wire: Wire,
  answer: Answer,
  options: { readonly allow5xx?: Allow5xx | undefined; readonly maxJsonDepth?: number | undefined } = {}
): { readonly kind: Finding["kind"]; readonly problems: ReadonlyArray<string> } | undefined => {
  if (answer.error !== undefined) return { kind: "no-answer", problems: [answer.error] }
  const problems = contract.checkResponse(r.method, r.operation.template, answer)
  if (answer.status >= 500 && !(options.allow5xx?.(answer.status, r, contract) ?? false)) {
    return { kind: "server-error", problems: [`status ${answer.status} (every answer must be below 500)`, ...problems] }
  }
  if (problems.length > 0) return { kind: "off-contract", problems }
  if (answer.status >= 200 && answer.status < 300) {
    const departures = contract.checkRequest(decodeRequest(r, wire))
    if (departures.length > 0) {
      return { kind: "accepted-nonconforming", problems: [`answered ${answer.status} to a request the document does not allow: ${departures.join("; ")}`] }
    }
    // Only where the operation takes a body: a body sent to a bodyless operation is never read.
    if (options.maxJsonDepth !== undefined && r.operation.payloads.length > 0) {
      const hostile = hostileContent(wire, options.maxJsonDepth)
      if (hostile.length > 0) {
        return { kind: "accepted-hostile", problems: [`answered ${answer.status} to a body the design says is refused: ${hostile.join(", ")}`] }
      }
    }
  }
  return undefined
}

/** Runs `numRuns` generated requests against the server and records every failure. */
export const exercise = async (options: {
  readonly baseUrl: string
  readonly contract: Contract
  readonly operation: Operation
  readonly requests: fc.Arbitrary<RequestShape>
  readonly findings: Findings
  readonly numRuns?: number
  readonly seed?: number
  readonly allow5xx?: Allow5xx | undefined
  /** When set, JSON bodies with `hostileContent` must not be accepted (2xx), whatever the document says. */
  readonly maxJsonDepth?: number | undefined
  readonly onExchange?: (r: RequestShape, answer: Answer) => void
}): Promise<void> => {
  const name = `${options.operation.method} ${options.operation.template}`
  await fc.assert(
    fc.asyncProperty(options.requests, async (r) => {
      const wire = toWire(r)
      const answer = await send(options.baseUrl, wire)
      options.onExchange?.(r, answer)
      const verdict = judge(options.contract, r, wire, answer, { allow5xx: options.allow5xx, maxJsonDepth: options.maxJsonDepth })
      if (verdict !== undefined) {
        options.findings.add({
          operation: name,
          kind: verdict.kind,
          label: r.label,
          request: describeRequest(wire),
          answer: describeAnswer(answer),
          problems: verdict.problems
        }, answer.status)
      }
      // Never fails here: failures are collected so that one run reports all of them.
      return true
    }),
    { numRuns: options.numRuns ?? RUNS, seed: options.seed ?? SEED, endOnFailure: true }
  )
}
