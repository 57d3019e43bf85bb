/**
 * Error bodies of the wire contract. Every error carries `code`, `message` and
 * (added by the transport) `request_id`; access and rate errors also carry
 * `error`, action and policy errors carry `details`.
 *
 * One class per HTTP status: handlers fail with `new NotFound({ code, message })`
 * and HttpApi encodes the body with the status annotated here.
 */
import * as Schema from "effect/Schema"

const fields = {
  code: Schema.String,
  message: Schema.String,
  error: Schema.optionalKey(Schema.String),
  details: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
}

/**
 * The classes share one field set, so TypeScript would see them as the same type; a type-only
 * status brand keeps them apart, so a handler cannot answer an error its endpoint does not declare.
 */
interface Status<S extends number> {
  readonly "~status": S
}

export class BadRequest extends Schema.Error<BadRequest, Status<400>>("BadRequest")(fields, { httpApiStatus: 400, description: "Bad request" }) {}
export class Unauthorized extends Schema.Error<Unauthorized, Status<401>>("Unauthorized")(fields, { httpApiStatus: 401, description: "Missing, invalid or revoked credentials" }) {}
export class Forbidden extends Schema.Error<Forbidden, Status<403>>("Forbidden")(fields, { httpApiStatus: 403, description: "Not allowed" }) {}
export class NotFound extends Schema.Error<NotFound, Status<404>>("NotFound")(fields, { httpApiStatus: 404, description: "Not found (also for other organizations' objects)" }) {}
export class Conflict extends Schema.Error<Conflict, Status<409>>("Conflict")(fields, { httpApiStatus: 409, description: "Conflict with the current state" }) {}
export class Gone extends Schema.Error<Gone, Status<410>>("Gone")(fields, { httpApiStatus: 410, description: "Expired or already used" }) {}
export class Unprocessable extends Schema.Error<Unprocessable, Status<422>>("Unprocessable")(fields, { httpApiStatus: 422, description: "Validation failed" }) {}
export class PayloadTooLarge extends Schema.Error<PayloadTooLarge, Status<413>>("PayloadTooLarge")(fields, {
  httpApiStatus: 413,
  description: "Body over the route's cap (PAYLOAD_TOO_LARGE); the cap is in the route's description"
}) {}
export class TooManyRequests extends Schema.Error<TooManyRequests, Status<429>>("TooManyRequests")(fields, { httpApiStatus: 429, description: "Rate or plan limit exceeded" }) {}
export class ServiceUnavailable extends Schema.Error<ServiceUnavailable, Status<503>>("ServiceUnavailable")(fields, { httpApiStatus: 503, description: "A dependency is unavailable" }) {}


type Details = Record<string, unknown>

/** Access and rate errors: `{error, code, message}`. */
export const unauthorized = (message = "Missing, invalid or revoked credentials", code = "UNAUTHORIZED") =>
  new Unauthorized({ code, message, error: message })
export const forbidden = (message = "Insufficient scope or role", code = "FORBIDDEN", details?: Details) =>
  new Forbidden({ code, message, error: message, ...(details ? { details } : {}) })
export const tooManyRequests = (message: string, code = "RATE_LIMIT_EXCEEDED") => new TooManyRequests({ code, message, error: message })

/** Action and policy errors: `{code, message, details}`. */
export const notFound = (message = "Not found", code = "NOT_FOUND", details: Details = {}) => new NotFound({ code, message, details })
export const badRequest = (code: string, message: string, details: Details = {}) => new BadRequest({ code, message, details })
export const conflict = (code: string, message: string, details: Details = {}) => new Conflict({ code, message, details })
export const gone = (code: string, message: string, details: Details = {}) => new Gone({ code, message, details })
export const unprocessable = (code: string, message: string, details: Details = {}) => new Unprocessable({ code, message, details })
export const validationError = (issues: ReadonlyArray<{ path: string; message: string }>) =>
  new Unprocessable({
    code: "VALIDATION_ERROR",
    message: issues.length === 1 ? `${issues[0]!.path}: ${issues[0]!.message}` : `${issues.length} validation issues`,
    details: { issues }
  })
