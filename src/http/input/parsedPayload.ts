/**
 * `HttpApiBuilder.group` whose JSON payloads are decoded from the value checkedJsonBodies
 * (./jsonInput.ts) already parsed, instead of from the request's text.
 *
 * Why: Effect 4's HttpApiBuilder reads a JSON payload as `request.text` and `JSON.parse`s it
 * (Effect 3's read `request.json`, which the checked request answers with the parsed value). The
 * checked request keeps no text, so each body was stringified and parsed again: per 1 MiB
 * base64 upload 3-4 ms of JSON.stringify and 1.2 ms of JSON.parse, and a second and third copy
 * of the body in memory (bench/PROFILE.md, Effect 4). Here an endpoint whose payload is JSON
 * only is registered with `handleRaw` (nothing parsed by the builder) and its payload decoded
 * the way the builder decodes it: the same schema (the union of the endpoint's payload schemas),
 * the same parse options (PayloadParseOptions, else ParseOptions, of the API, group and
 * endpoint) and the same failure (HttpApiSchemaError "Payload"). A request that did not come
 * through checkedJsonBodies is read as the builder reads it.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import { HttpApiSchemaError } from "effect/http-api/HttpApiError"
import * as HttpMethod from "effect/http/HttpMethod"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"
import { checkedJson } from "./jsonInput.js"

/** What is read here of an API, a group and an endpoint (the builder's own types are per endpoint). */
interface Annotated {
  readonly annotations: Context.Context<never>
}
interface Endpoint extends Annotated {
  readonly method: string
  readonly payload: HttpApiEndpoint.PayloadMap
}
interface Group extends Annotated {
  readonly endpoints: Readonly<Record<string, Endpoint>>
}

type Decode = (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<unknown, HttpApiSchemaError, unknown> | HttpServerResponse.HttpServerResponse

/** The payload decoder of an endpoint whose only payload is JSON in a body; otherwise undefined. */
const jsonPayloadDecoder = (
  api: Annotated,
  group: Group,
  endpoint: Endpoint
): Decode | undefined => {
  const json = endpoint.payload.get("application/json")
  if (endpoint.payload.size !== 1 || json === undefined || json.encoding._tag !== "Json" || !HttpMethod.hasBody(endpoint.method as HttpMethod.HttpMethod)) {
    return undefined
  }
  const { schemas } = json as { readonly schemas: readonly [Schema.Top, ...Array<Schema.Top>] }
  const annotations = Context.merge(Context.merge(api.annotations, group.annotations), endpoint.annotations)
  const options = Context.getOrUndefined(annotations, HttpApi.PayloadParseOptions) ??
    Context.getOrUndefined(annotations, HttpApi.ParseOptions)
  const decode = Schema.decodeUnknownEffect(Schema.Union(schemas), options)
  const nullOnEmpty = schemas.some((s) => SchemaAST.isNull(SchemaAST.toEncoded(s.ast)))
  return (request) => {
    const parsed = checkedJson(request)
    if (parsed !== undefined) return HttpApiSchemaError.wrap("Payload", decode(parsed.value))
    // Not through checkedJsonBodies: what HttpApiBuilder's decodePayload does for a JSON payload.
    const contentType = normalizeMediaType(request.headers["content-type"] ?? "application/json")
    if (contentType !== "application/json") {
      return HttpServerResponse.text(`Unsupported content-type: ${contentType}`, { status: 415 })
    }
    return HttpApiSchemaError.wrap(
      "Payload",
      Effect.flatMap(Effect.orDie(request.text), (text) => {
        if (text === "") return decode(nullOnEmpty ? null : undefined)
        try {
          return decode(JSON.parse(text))
        } catch {
          return Effect.fail(new Schema.SchemaError(new SchemaIssue.InvalidValue({ message: "Expected a valid JSON body" })))
        }
      })
    )
  }
}

/** effect's internal/mediaType normalize: lower case, parameters dropped. */
const normalizeMediaType = (contentType: string): string => {
  const normalized = contentType.toLowerCase().trim()
  const index = normalized.indexOf(";")
  return index === -1 ? normalized : normalized.slice(0, index).trim()
}

type AnyHandler = (request: { readonly request: HttpServerRequest.HttpServerRequest }) => Effect.Effect<unknown, unknown, unknown>
interface UntypedHandlers {
  handle(identifier: string, handler: AnyHandler, options?: { readonly uninterruptible?: boolean | undefined }): UntypedHandlers
  handleRaw(identifier: string, handler: AnyHandler, options?: { readonly uninterruptible?: boolean | undefined }): UntypedHandlers
}

/**
 * `HttpApiBuilder.group`, with `handle` of a JSON-payload endpoint registered as described above.
 * The handlers see the same request (`payload` decoded, the rest as the builder gives it).
 */
export const group: typeof HttpApiBuilder.group = (api, groupIdentifier, build) =>
  HttpApiBuilder.group(api, groupIdentifier, (handlers) => {
    const apiGroup = (api.groups as unknown as Readonly<Record<string, Group>>)[groupIdentifier]!
    // The builder's Handlers are typed per endpoint; this wrapper only forwards them.
    const inner = handlers as unknown as UntypedHandlers
    const self: UntypedHandlers = Object.create(inner)
    Object.defineProperty(self, "handle", {
      value: (identifier: string, handler: AnyHandler, options?: { readonly uninterruptible?: boolean | undefined }) => {
        const endpoint = apiGroup.endpoints[identifier]
        const decode = endpoint === undefined ? undefined : jsonPayloadDecoder(api, apiGroup, endpoint)
        if (decode === undefined) {
          inner.handle(identifier, handler, options)
        } else {
          inner.handleRaw(identifier, (request) => {
            const payload = decode(request.request)
            return HttpServerResponse.isHttpServerResponse(payload)
              ? Effect.succeed(payload)
              : Effect.flatMap(payload, (value) => handler({ ...request, payload: value } as typeof request))
          }, options)
        }
        return self
      }
    })
    return build(self as unknown as typeof handlers)
  })
