/**
 * The property-based contract suite, shared by both APIs: one test per operation (from the
 * API definition), one for methods the document does not declare on a path, one for paths it
 * does not declare, and self-checks showing the validator can fail.
 *
 * Settings (environment):
 * - CONTRACT_RUNS: generated requests per operation (default 100; e.g. 5000 for a long run);
 * - CONTRACT_SEED: replays a run (every failure message names its seed);
 * - CONTRACT_REPORT: a file to append every finding to, one JSON object per line;
 * - CONTRACT_VERBOSE=1: per operation, the statuses reached and why valid requests were refused.
 *
 * A test fails with every distinct failure it saw (request to replay it, answer, what is
 * wrong), not only the first.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as fc from "fast-check"
import { appendFileSync } from "node:fs"
import { type ArbitraryOptions, type Operation, operationsOf, pct, requestsFor, validRequest } from "./arbitraries.js"
import { type Contract, makeContract } from "./openapiValidator.js"
import { type Allow5xx, describeAnswer, describeRequest, exercise, type Finding, Findings, formatFindings, RUNS, SEED, send, toWire } from "./runner.js"

export interface Target {
  readonly baseUrl: string
  /** The published OpenAPI document, as the server serves it (or as the repository publishes it). */
  readonly document: unknown
  readonly close: () => Promise<void>
}

export interface SuiteOptions<Id extends string, Groups extends HttpApiGroup.Constraint> {
  readonly name: string
  readonly api: HttpApi.HttpApi<Id, Groups>
  readonly start: () => Promise<Target>
  readonly arbitraries: ArbitraryOptions
  /** The server's body limit: one mutation sends a body just over it. */
  readonly maxBodyBytes?: number
  /** A documented exception to "below 500" (e.g. 501 from a server built without an optional part). */
  readonly allow5xx?: Allow5xx
  readonly numRuns?: number
  /**
   * DESIGN.md: "one decode step owns depth limits, unknown keys, prototype keys, header-bound
   * values and text fidelity". JSON bodies nested deeper than this, or with a `__proto__` key,
   * a NUL or an unpaired surrogate anywhere, must not be accepted even where the document's
   * free-form fields would take them (default 64, the gateway's default depth cap; `false`: off).
   */
  readonly maxJsonDepth?: number | false
  /** The document to hold the server to, when not the one the target serves. */
  readonly document?: unknown
  /**
   * The operations given their own generated requests (default: every one); the checks of the
   * document, of undeclared methods and of undeclared paths cover every operation all the same.
   */
  readonly exercised?: (operation: Operation) => boolean
  /**
   * Paths the server answers beside the document, on purpose (the gateway's console at `/`, its
   * probes and docs): not undeclared paths. The path only, decoded, without the query.
   */
  readonly servedBeside?: (path: string) => boolean
}

const report = (suite: string, findings: ReadonlyArray<Finding>) => {
  const file = process.env.CONTRACT_REPORT
  if (file !== undefined && file !== "") {
    for (const f of findings) appendFileSync(file, JSON.stringify({ suite, seed: SEED, ...f }) + "\n")
  }
}

const fail = (title: string, findings: ReadonlyArray<Finding>) => {
  if (findings.length > 0) {
    throw new Error(`${title}: ${findings.length} distinct failure(s) (seed ${SEED}; rerun with CONTRACT_SEED=${SEED})\n${formatFindings(findings)}`)
  }
}

const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const

export const contractSuite = <Id extends string, Groups extends HttpApiGroup.Constraint>(options: SuiteOptions<Id, Groups>) => {
  const operations = operationsOf(options.api)
  describe(`${options.name}: every answer is below 500 and matches the published document`, () => {
    let target: Target
    let contract: Contract
    beforeAll(async () => {
      target = await options.start()
      contract = makeContract(options.document ?? target.document)
    }, 60_000)
    afterAll(async () => {
      await target?.close()
    })

    it("the document has exactly the API's operations", () => {
      const fromApi = operations.map((o) => `${o.method} ${o.template}`).sort()
      const fromDoc = contract.operations.map((o) => `${o.method} ${o.template}`).sort()
      expect(fromDoc).toEqual(fromApi)
      expect(operations.length).toBeGreaterThan(0)
    })

    it("the document reads as JSON Schema 2020-12 as published (no ambiguous $id)", () => {
      expect(contract.documentProblems).toEqual([])
    })

    it("the validator rejects answers the document does not allow (it can fail)", () => {
      // An operation that declares a success and the spec's 400 (every one does today).
      const first = contract.operations.find((o) => o.op.responses?.["400"] !== undefined) ?? contract.operations[0]
      const ok = Object.keys(first!.op.responses).find((s) => s.startsWith("2"))!
      const json = (status: number, body: unknown, contentType = "application/json") => ({
        status,
        headers: { "content-type": contentType },
        bytes: Buffer.from(JSON.stringify(body))
      })
      // An undeclared status, a body of the wrong shape, a wrong media type, an unknown error field.
      expect(contract.checkResponse(first!.method, first!.template, json(418, {}))).not.toEqual([])
      expect(contract.checkResponse(first!.method, first!.template, json(Number(ok), { surely: "not this" }))).not.toEqual([])
      expect(contract.checkResponse(first!.method, first!.template, json(400, { statusCode: 400, message: "m", error: "Bad Request" }, "text/html"))).not.toEqual([])
      expect(contract.checkResponse(first!.method, first!.template, json(400, { statusCode: 400, message: "m", error: "Bad Request", stack: "x" }))).not.toEqual([])
      expect(contract.checkResponse(first!.method, first!.template, json(400, { statusCode: 404, message: "m", error: "Bad Request" }))).not.toEqual([])
      expect(contract.checkResponse(first!.method, first!.template, json(400, { statusCode: 400, message: "m", error: "Bad Request" }))).toEqual([])
    })

    for (const operation of operations.filter(options.exercised ?? (() => true))) {
      const title = `${operation.method} ${operation.template} (${operation.group}.${operation.name})`
      it(title, async () => {
        // Each operation meets the world as the fixture defines it, so a finding replays from a fresh start.
        const fresh = await options.start()
        const findings = new Findings()
        const labels = new Map<string, number>()
        const samples = new Map<string, string>()
        await exercise({
          baseUrl: fresh.baseUrl,
          contract,
          operation,
          requests: requestsFor(operation, { ...options.arbitraries, oversizedBytes: options.maxBodyBytes === undefined ? undefined : options.maxBodyBytes + 1 }),
          findings,
          numRuns: options.numRuns ?? RUNS,
          allow5xx: options.allow5xx,
          maxJsonDepth: options.maxJsonDepth === false ? undefined : options.maxJsonDepth ?? 64,
          onExchange: (r, answer) => {
            const key = `${r.label === "valid" ? "valid" : "mutated"} ${answer.status}`
            labels.set(key, (labels.get(key) ?? 0) + 1)
            if (r.label === "valid" && answer.status >= 400) {
              samples.set(`${answer.status} ${answer.bytes.toString("utf8").slice(0, 160)}`, describeRequest(toWire(r)).slice(0, 240))
            }
          }
        }).finally(() => fresh.close())
        report(options.name, findings.all)
        if (process.env.CONTRACT_VERBOSE === "1") {
          // What the generated requests reached: statuses of valid and mutated ones, and why valid ones were refused.
          console.log(`${title} ${JSON.stringify(Object.fromEntries([...labels].sort()))}\n${[...samples].slice(0, 8).map(([a, q]) => `    ${a}\n      <- ${q}`).join("\n")}`)
        }
        fail(title, findings.all)
      }, Math.max(120_000, (options.numRuns ?? RUNS) * 200))
    }

    it("methods the document does not declare on a path: 405 with Allow (or 404), never 500, in the error shape", async () => {
      const findings = new Findings()
      const templates = [...new Set(operations.map((o) => o.template))]
      for (const template of templates) {
        const declared = contract.methodsOf(template)
        const operation = operations.find((o) => o.template === template)!
        const [request] = fc.sample(validRequest(operation, options.arbitraries), { numRuns: 1, seed: SEED })
        for (const method of HTTP_METHODS.filter((m) => !declared.includes(m))) {
          const wire = { ...toWire(request!), method }
          const answer = await send(target.baseUrl, wire)
          const problems = judgeUndeclared(contract, answer, declared, isMalformedUrl(wire.url))
          if (problems.length > 0) {
            findings.add({
              operation: `${method} ${template}`,
              kind: answer.status >= 500 ? "server-error" : answer.error !== undefined ? "no-answer" : "off-contract",
              label: "undeclared-method",
              request: describeRequest(wire),
              answer: describeAnswer(answer),
              problems
            }, answer.status)
          }
        }
      }
      report(options.name, findings.all)
      fail("undeclared methods", findings.all)
    }, 120_000)

    it("paths the document does not declare: 404 in the document's NotFound shape, never 500", async () => {
      const findings = new Findings()
      const prefix = operations[0]!.template.split("/").slice(0, 2).join("/")
      const segment = fc.oneof(
        fc.stringMatching(/^[a-z0-9-]{1,12}$/),
        fc.string({ maxLength: 12 }).map(pct),
        fc.constantFrom("%00", "%ED%A0%80", "%E0%A4%A", "..", "%2e%2e", "%2F", "__proto__", "constructor", "x".repeat(3000))
      )
      await fc.assert(
        fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.constantFrom(...HTTP_METHODS), fc.boolean(), async (segments, method, prefixed) => {
          const url = `${prefixed ? prefix : ""}/${segments.join("/")}`
          const known = contract.operations.some((o) => new RegExp(`^${o.template.replace(/\{\w+\}/g, "[^/]+")}$`).test(url.split("?")[0]!))
          if (known || (!isMalformedUrl(url) && options.servedBeside?.(decodeURIComponent(url.split("?")[0]!)) === true)) return true
          const wire = { method, url, headers: {}, body: undefined }
          const answer = await send(target.baseUrl, wire)
          const problems = answer.error !== undefined
            ? [answer.error]
            : answer.status === 404
            ? contract.checkComponent("NotFound", parseJson(answer.bytes)).map((p) => `404 body: ${p}`)
            : answer.status === 400
            ? contract.checkComponent("BadRequest", parseJson(answer.bytes)).map((p) => `400 body: ${p}`)
            : [`status ${answer.status} for a path the document does not declare (expected 404, or 400 for a malformed URL)`]
          if (problems.length > 0) {
            findings.add({
              operation: `${method} <undeclared path>`,
              kind: answer.status >= 500 ? "server-error" : "off-contract",
              label: "undeclared-path",
              request: describeRequest(wire),
              answer: describeAnswer(answer),
              problems
            }, answer.status)
          }
          return true
        }),
        { numRuns: Math.max(50, Math.floor((options.numRuns ?? RUNS) / 2)), seed: SEED }
      )
      report(options.name, findings.all)
      fail("undeclared paths", findings.all)
    }, 120_000)
  })
}

const parseJson = (bytes: Buffer): unknown => {
  try {
    return JSON.parse(bytes.toString("utf8"))
  } catch {
    return bytes.toString("utf8")
  }
}

/**
 * Whether the URL (its path or its query) holds an escape that is not UTF-8 (`pct` writes a lone
 * surrogate as its 3-byte WTF-8 form, %ED%B0%80, as a hostile client may): a request the server
 * refuses as malformed before it looks at the method.
 */
export const isMalformedUrl = (url: string): boolean => {
  try {
    decodeURIComponent(url)
    return false
  } catch {
    return true
  }
}

/**
 * An undeclared method on a declared path: 405 with an Allow header naming exactly the
 * document's methods for that path, body in the document's error shape (its `MethodNotAllowed`
 * component when it has one, else the shape of its `NotFound` with 405's status and name), or a
 * 404 in the NotFound shape. A URL that is not UTF-8 (`malformedUrl`) may be the 400 of a
 * malformed request instead, in the BadRequest shape: the request line is judged before its
 * method (random seeds' path and query parameters with a lone surrogate).
 */
export const judgeUndeclared = (
  contract: Contract,
  answer: { status: number; headers: Readonly<Record<string, string>>; bytes: Buffer; error?: string },
  declared: ReadonlyArray<string>,
  malformedUrl = false
): ReadonlyArray<string> => {
  if (answer.error !== undefined) return [answer.error]
  const body = parseJson(answer.bytes)
  if (answer.status === 404) return contract.checkComponent("NotFound", body).map((p) => `404 body: ${p}`)
  if (answer.status === 400 && malformedUrl) return contract.checkComponent("BadRequest", body).map((p) => `400 body: ${p}`)
  if (answer.status !== 405) return [`status ${answer.status}, expected 405 (or 404)`]
  const problems: Array<string> = []
  const allow = (answer.headers["allow"] ?? "").split(",").map((m) => m.trim().toUpperCase()).filter((m) => m !== "")
  const expected = [...declared].sort()
  const got = [...new Set(allow)].filter((m) => m !== "HEAD" && m !== "OPTIONS").sort()
  if (JSON.stringify(got) !== JSON.stringify(expected)) problems.push(`Allow: ${answer.headers["allow"] ?? "(none)"}, expected ${expected.join(", ")}`)
  if (!/^application\/json/i.test(answer.headers["content-type"] ?? "")) problems.push(`content-type ${answer.headers["content-type"] ?? "(none)"}`)
  if (contract.hasComponent("MethodNotAllowed")) {
    problems.push(...contract.checkComponent("MethodNotAllowed", body).map((p) => `405 body: ${p}`))
  } else {
    // The NotFound shape with 405's status and name in place of 404's.
    const asNotFound = body !== null && typeof body === "object"
      ? { ...(body as Record<string, unknown>), statusCode: 404, error: "Not Found" }
      : body
    const named = body !== null && typeof body === "object" &&
      (body as Record<string, unknown>).statusCode === 405 && (body as Record<string, unknown>).error === "Method Not Allowed"
    if (!named) problems.push(`405 body must carry statusCode 405 and error "Method Not Allowed": ${JSON.stringify(body).slice(0, 200)}`)
    problems.push(...contract.checkComponent("NotFound", asNotFound).map((p) => `405 body (NotFound shape): ${p}`))
  }
  return problems
}

export type { Operation }
