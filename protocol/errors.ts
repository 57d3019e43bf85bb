/**
 * Error bodies of the wire contract. Every error carries `code`, `message` and
 * (added by the transport) `request_id`; access and rate errors also carry
 * `error`, action and policy errors carry `details`.
 *
 * One class per HTTP status: handlers fail with `new NotFound({ code, message })`
 * and HttpApi encodes the body with the status annotated here.
 */
import * as Effect from "effect/Effect"
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
export const validationError = (issues: ReadonlyArray<Issue>) =>
  new Unprocessable({ code: "VALIDATION_ERROR", message: validationMessage(issues), details: { issues } })

/*
 * Refusals: the reasons an area's service gives, each a wire error of its own with its status and
 * its literal code, so an endpoint declares exactly the refusals it can answer and the OpenAPI
 * lists their codes. The body is `{code, message, details}` (the `_tag` is the class's, not the
 * wire's); handlers let them through with `Effect.catchReasons`.
 *
 *   export class WebhookNotFound extends Schema.Error<WebhookNotFound>("WebhookNotFound")(
 *     refusal("NOT_FOUND", "Webhook not found"), { httpApiStatus: 404 }) {
 *     readonly _tag = "WebhookNotFound"
 *   }
 *   new WebhookNotFound({})                      // code and message by default
 *   new WebhookNotFound({ message: "…", details: { … } })
 */

const DetailsSchema = Schema.Record(Schema.String, Schema.Unknown)

const codeField = <const Code extends string>(code: Code) => Schema.Literal(code).pipe(Schema.withConstructorDefault(Effect.succeed(code)))
const detailsField = DetailsSchema.pipe(Schema.withConstructorDefault(Effect.succeed({})))

/** The fields of a refusal with its literal `code`, its default `message` when given (else each refusal says its own), and `details` ({} by default). */
export function refusal<const Code extends string>(code: Code): {
  code: ReturnType<typeof codeField<Code>>
  message: Schema.String
  details: typeof detailsField
}
export function refusal<const Code extends string>(code: Code, message: string): {
  code: ReturnType<typeof codeField<Code>>
  message: Schema.withConstructorDefault<Schema.String>
  details: typeof detailsField
}
export function refusal(code: string, message?: string) {
  return {
    code: codeField(code),
    message: message === undefined ? Schema.String : Schema.String.pipe(Schema.withConstructorDefault(Effect.succeed(message))),
    details: detailsField
  }
}

/** The fields of an access or rate refusal (401, 403, 429), which repeats its message as `error`. */
export const accessRefusal = <const Code extends string>(code: Code, message: string) => ({
  code: codeField(code),
  message: Schema.String.pipe(Schema.withConstructorDefault(Effect.succeed(message))),
  error: Schema.String.pipe(Schema.withConstructorDefault(Effect.succeed(message))),
  details: Schema.optionalKey(DetailsSchema)
})

export interface Issue {
  readonly path: string
  readonly message: string
}

/** One issue is its own message; several are counted. */
export const validationMessage = (issues: ReadonlyArray<Issue>) =>
  issues.length === 1 ? `${issues[0]!.path}: ${issues[0]!.message}` : `${issues.length} validation issues`

type RefusalProps = { readonly code?: string; readonly message: string; readonly details?: Record<string, unknown> }

/** Input the schema let through but the domain refuses (422 VALIDATION_ERROR, `details.issues`). */
export class InvalidInput extends Schema.Error<InvalidInput>("InvalidInput")(refusal("VALIDATION_ERROR"), {
  httpApiStatus: 422,
  description: "Validation failed"
}) {
  readonly _tag = "InvalidInput"
  /** From the issues (`new InvalidInput({ issues })`), or from the wire body when decoded. */
  constructor(props: { readonly issues: ReadonlyArray<Issue> } | RefusalProps) {
    super(
      "issues" in props
        ? { code: "VALIDATION_ERROR", message: validationMessage(props.issues), details: { issues: props.issues } }
        : (props as { message: string; code?: "VALIDATION_ERROR" })
    )
  }
  static of(issues: ReadonlyArray<Issue>) {
    return new InvalidInput({ issues })
  }
  static one(path: string, message: string) {
    return new InvalidInput({ issues: [{ path, message }] })
  }
  /** The issues, as given (for callers that add their own). */
  get issues(): ReadonlyArray<Issue> {
    return (this.details.issues ?? []) as ReadonlyArray<Issue>
  }
}

/** An agent slug that is not registered, or not the caller's organization's (agents, DIDs, credentials alike). */
export class AgentNotFound extends Schema.Error<AgentNotFound>("AgentNotFound")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "Agent not found (also another organization's)"
}) {
  readonly _tag = "AgentNotFound"
  /** From the slug (`new AgentNotFound({ agent_slug })`), or from the wire body when decoded. */
  constructor(props: { readonly agent_slug: string } | RefusalProps) {
    super(
      "agent_slug" in props
        ? { code: "NOT_FOUND", message: `Agent ${props.agent_slug} not found`, details: { agent_slug: props.agent_slug } }
        : (props as { message: string; code?: "NOT_FOUND" })
    )
  }
}
