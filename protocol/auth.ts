/**
 * Who is calling, and the middleware that establishes it. The implementations
 * live in `src/access/`; a client only needs these declarations.
 */
import * as Context from "effect/Context"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import { TooManyRequests, Unauthorized, Unprocessable } from "./errors.js"

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

/**
 * API key (`svc_live_…`) or dashboard JWT as `Authorization: Bearer`; rate limited
 * per key (per user for JWTs).
 */
export class Authenticated extends HttpApiMiddleware.Service<Authenticated, { provides: CurrentPrincipal }>()(
  "gateway/Authenticated",
  { security: { bearer: HttpApiSecurity.bearer }, error: [Unauthorized, TooManyRequests] }
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
