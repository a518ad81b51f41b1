/**
 * The gateway's error contract: every non-2xx body is `{statusCode, message, error}`
 * (the spec's §7 shape) plus the few extra fields the spec names.
 *
 * The classes are yieldable TaggedErrors for handlers; their wire schema drops `_tag`,
 * since the HTTP status alone identifies the error to a client.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"

const wire = <Status extends number, Name extends string, Extra extends Schema.Struct.Fields>(
  status: Status,
  name: Name,
  extra: Extra
) =>
  Schema.Struct({
    statusCode: Schema.Literal(status),
    message: Schema.String,
    error: Schema.Literal(name),
    ...extra
  })

const fields = <Status extends number, Name extends string>(status: Status, name: Name) => ({
  statusCode: Schema.Literal(status).pipe(Schema.withConstructorDefault(Effect.succeed(status))),
  error: Schema.Literal(name).pipe(Schema.withConstructorDefault(Effect.succeed(name))),
  message: Schema.String
})

interface WireBody {
  readonly statusCode: number
  readonly message: string
  readonly error: string
  readonly currentStatus?: string | undefined
  readonly code?: string | undefined
  readonly currentValue?: string | number | boolean | null | undefined
  readonly changedBy?: string | null | undefined
}

/**
 * Wire schema for an error class: the class's fields without `_tag`, annotated with its status
 * (`httpApiStatus`, what HttpApiSchema.status sets) and named after the class in the document.
 */
const onWire = <Self extends WireBody, T extends WireBody, E>(
  cls: Schema.Codec<Self, unknown> & { new(props: T): Self; readonly identifier: string },
  w: Schema.Codec<T, E>,
  status: number
): Schema.Codec<Self, E> =>
  // Named on the wire side: the document describes what is encoded.
  w.annotate({ identifier: cls.identifier }).pipe(
    Schema.decodeTo(
      Schema.toType(cls),
      SchemaTransformation.transform<Self, T>({
        decode: (body) => new cls(body),
        // Picked by name: an Error's `message` is not an enumerable own property, so a spread loses it.
        encode: (e) => {
          const body: { -readonly [K in keyof WireBody]: WireBody[K] } = {
            statusCode: e.statusCode,
            message: e.message,
            error: e.error
          }
          if (e.currentStatus !== undefined) body.currentStatus = e.currentStatus
          if (e.code !== undefined) body.code = e.code
          if (e.currentValue !== undefined) body.currentValue = e.currentValue
          if (e.changedBy !== undefined) body.changedBy = e.changedBy
          // T is WireBody narrowed to this class's literals, which `e` carries.
          return body as T
        }
      })
    )
  ).annotate({ httpApiStatus: status })

const OptionalCurrentStatus = { currentStatus: Schema.optional(Schema.String) }
const OptionalCode = { code: Schema.optional(Schema.Literal("INVALID_FIELD")) }
const WireCurrentStatus = { currentStatus: Schema.optionalKey(Schema.String) }
const WireCode = { code: Schema.optionalKey(Schema.Literal("INVALID_FIELD")) }

export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", {
  ...fields(400, "Bad Request"),
  ...OptionalCurrentStatus,
  ...OptionalCode
}) {}
export const BadRequestWire = onWire(BadRequest, wire(400, "Bad Request", { ...WireCurrentStatus, ...WireCode }), 400)

export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", fields(401, "Unauthorized")) {}
export const UnauthorizedWire = onWire(Unauthorized, wire(401, "Unauthorized", {}), 401)

/** A rule of the workspace refuses this caller (four-eyes), or the edge's identity names another tenant. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", fields(403, "Forbidden")) {}
export const ForbiddenWire = onWire(Forbidden, wire(403, "Forbidden", {}), 403)

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", fields(404, "Not Found")) {}
export const NotFoundWire = onWire(NotFound, wire(404, "Not Found", {}), 404)

/**
 * A path the API has, asked with a method none of its endpoints takes (RFC 9110: 405). `allow`
 * (the methods the path takes) leaves as the `Allow` header, not in the body.
 */
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", {
  ...fields(405, "Method Not Allowed"),
  allow: Schema.optional(Schema.Array(Schema.String))
}) {}
export const MethodNotAllowedWire = onWire(MethodNotAllowed, wire(405, "Method Not Allowed", {}), 405)

const CellValue = Schema.Union([Schema.String, Schema.Finite, Schema.Boolean, Schema.Null])

/**
 * A write that lost a race or names what is no longer so. An `edit_cell` with `expected` that no
 * longer holds carries the cell's `currentValue` and who changed it last (`changedBy`, null when
 * the timeline does not say).
 */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  ...fields(409, "Conflict"),
  currentValue: Schema.optional(CellValue),
  changedBy: Schema.optional(Schema.NullOr(Schema.String))
}) {}
export const ConflictWire = onWire(Conflict, wire(409, "Conflict", {
  currentValue: Schema.optionalKey(CellValue.annotate({ description: "edit_cell with expected: the cell's value now" })),
  changedBy: Schema.optionalKey(Schema.NullOr(Schema.String).annotate({ description: "edit_cell with expected: who changed the cell last" }))
}), 409)

export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()(
  "PayloadTooLarge",
  fields(413, "Payload Too Large")
) {}
export const PayloadTooLargeWire = onWire(PayloadTooLarge, wire(413, "Payload Too Large", {}), 413)

export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()(
  "UnsupportedMediaType",
  fields(415, "Unsupported Media Type")
) {}
export const UnsupportedMediaTypeWire = onWire(UnsupportedMediaType, wire(415, "Unsupported Media Type", {}), 415)

export class InternalServerError extends Schema.TaggedError<InternalServerError>()(
  "InternalServerError",
  fields(500, "Internal Server Error")
) {}
export const InternalServerErrorWire = onWire(InternalServerError, wire(500, "Internal Server Error", {}), 500)

export class BadGateway extends Schema.TaggedError<BadGateway>()("BadGateway", fields(502, "Bad Gateway")) {}
export const BadGatewayWire = onWire(BadGateway, wire(502, "Bad Gateway", {}), 502)

export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()(
  "ServiceUnavailable",
  fields(503, "Service Unavailable")
) {}
export const ServiceUnavailableWire = onWire(ServiceUnavailable, wire(503, "Service Unavailable", {}), 503)

export class GatewayTimeout extends Schema.TaggedError<GatewayTimeout>()(
  "GatewayTimeout",
  fields(504, "Gateway Timeout")
) {}
export const GatewayTimeoutWire = onWire(GatewayTimeout, wire(504, "Gateway Timeout", {}), 504)

/** Failures any upstream-backed endpoint can answer. */
export type UpstreamError = BadGateway | ServiceUnavailable | GatewayTimeout

export type ApiError =
  | BadRequest
  | Unauthorized
  | Forbidden
  | NotFound
  | MethodNotAllowed
  | Conflict
  | PayloadTooLarge
  | UnsupportedMediaType
  | InternalServerError
  | UpstreamError

export const isApiError = (u: unknown): u is ApiError =>
  u instanceof BadRequest || u instanceof Unauthorized || u instanceof Forbidden || u instanceof NotFound || u instanceof MethodNotAllowed || u instanceof Conflict ||
  u instanceof PayloadTooLarge || u instanceof UnsupportedMediaType || u instanceof InternalServerError || u instanceof BadGateway ||
  u instanceof ServiceUnavailable || u instanceof GatewayTimeout

/**
 * The errors every /v1 endpoint declares (Effect 4 has no API-wide or group-wide errors): any
 * request can be malformed or too large; with the edge's identity configured (SVC_ACTOR_HEADER,
 * SVC_JWT_*) it can lack or misstate it (401, or 403 for another tenant's token,
 * src/http/identity.ts); any upstream-backed one can meet upstream trouble.
 */
export const CommonErrors = [
  BadRequestWire,
  UnauthorizedWire,
  ForbiddenWire,
  PayloadTooLargeWire,
  InternalServerErrorWire,
  BadGatewayWire,
  ServiceUnavailableWire,
  GatewayTimeoutWire
] as const
