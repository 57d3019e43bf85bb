/**
 * Who is calling, and the middleware that establishes it. The implementations
 * live in `src/access/`; a client only needs these declarations.
 */
import * as Context from "effect/Context"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import * as Schema from "effect/Schema"
import { accessRefusal, TooManyRequests, Unauthorized, Unprocessable } from "./errors.js"

export type Role = "owner" | "admin" | "member"

export interface Principal {
  readonly kind: "api_key" | "jwt"
  readonly orgUuid: string
  readonly userUuid: string
  readonly email: string
  readonly role: Role
  /** `["*"]` for JWTs; the key's scopes otherwise. */
  readonly scopes: ReadonlyArray<string>
  readonly keyId: string | undefined
}

export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()("gateway/CurrentPrincipal") {}

/** The caller's address and the rate-limit key public routes are counted under. */
export interface Client {
  readonly ip: string
}
export class CurrentClient extends Context.Service<CurrentClient, Client>()("gateway/CurrentClient") {}

/** A bearer credential that is missing, malformed, unknown, expired or revoked. */
export class InvalidCredential extends Schema.Error<InvalidCredential>("InvalidCredential")(
  accessRefusal("UNAUTHORIZED", "Missing, invalid or revoked credentials"),
  { httpApiStatus: 401, description: "Missing, invalid or revoked credentials" }
) {
  readonly _tag = "InvalidCredential"
}

/** The state of the failed-authentication budget that ran out, for the 429's `RateLimit` headers. */
export interface ThrottleState {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  readonly resetMs: number
  readonly retryAfterSeconds: number
  readonly windowMs: number
}

/**
 * The client address, or the key prefix, is past its budget of failed authentications: the
 * credential was not checked. Answered by the middleware with the budget's `RateLimit` headers,
 * so `by` and `state` travel with the refusal but are not part of its body.
 */
export class CredentialsThrottled extends Schema.Error<CredentialsThrottled>("CredentialsThrottled")(
  accessRefusal("RATE_LIMIT_EXCEEDED", "Too many failed authentications"),
  { httpApiStatus: 429, description: "Too many failed authentications from this address or with this key prefix" }
) {
  readonly _tag = "CredentialsThrottled"
  readonly by: "address" | "key_prefix"
  readonly state: ThrottleState
  constructor(props: { readonly by: "address" | "key_prefix"; readonly state: ThrottleState }) {
    const message = `Too many failed authentications ${props.by === "address" ? "from this address" : "with this key prefix"}; retry in ${props.state.retryAfterSeconds} s`
    super({ message, error: message })
    this.by = props.by
    this.state = props.state
  }
}

/**
 * API key (`svc_live_…`) or dashboard JWT as `Authorization: Bearer`; rate limited
 * per key (per user for JWTs).
 */
export class Authenticated extends HttpApiMiddleware.Service<Authenticated, { provides: CurrentPrincipal }>()(
  "gateway/Authenticated",
  { security: { bearer: HttpApiSecurity.bearer }, error: [InvalidCredential, Unauthorized, TooManyRequests] }
) {}

/** Like `Authenticated`, but a missing credential is allowed (routes that are public yet richer with a key). */
export class OptionallyAuthenticated extends HttpApiMiddleware.Service<OptionallyAuthenticated, { provides: CurrentClient }>()(
  "gateway/OptionallyAuthenticated",
  { error: TooManyRequests }
) {}

/** Public routes: no credentials, rate limited per client IP. */
export class PublicRoute extends HttpApiMiddleware.Service<PublicRoute, { provides: CurrentClient }>()("gateway/PublicRoute", {
  error: TooManyRequests
}) {}

/** Platform administration: `X-Admin-Key` header (ADMIN_KEY unset → every call is 401). */
export class AdminKey extends HttpApiMiddleware.Service<AdminKey>()("gateway/AdminKey", {
  security: { adminKey: HttpApiSecurity.apiKey({ in: "header", key: "X-Admin-Key" }) },
  error: Unauthorized
}) {}

/**
 * Turns schema failures into the contract's 422 bodies (and 400 for a body that is not JSON, which
 * `completeOpenApi` lists on the operations that take a body). The edge screen answers 422 on any route.
 */
export class ErrorShape extends HttpApiMiddleware.Service<ErrorShape>()("gateway/ErrorShape", { error: Unprocessable }) {}
