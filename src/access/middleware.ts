/**
 * Implementations of the access middleware declared in `protocol/auth.ts`, and
 * the API-wide translation of schema failures into the contract's bodies.
 */
import { timingSafeEqual } from "node:crypto"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { HttpApiMiddleware } from "effect/http-api"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as SchemaIssue from "effect/SchemaIssue"
import { AdminKey, Authenticated, CurrentClient, CurrentPrincipal, ErrorShape, OptionallyAuthenticated, PublicRoute } from "../../protocol/auth.js"
import { unauthorized, validationMessage } from "../../protocol/errors.js"
import { provide, respond, runOutcome, type SyncOutcome, syncMiddleware, syncSecurity } from "../gateway/compiled/sync-middleware.js"
import { addResponseHeaders, requestIdOf } from "../gateway/request.js"
import { Config } from "../platform/config.js"
import { type RateLimitResult, rateLimitHeaders } from "../platform/redis/index.js"
import { callerAddress } from "../platform/self-calls.js"
import type { CredentialsThrottled } from "./errors.js"
import { Access } from "./service.js"

const tooMany = (
  result: RateLimitResult,
  policy: string,
  requestId: string,
  message = `Rate limit of ${result.limit} requests per minute exceeded; retry in ${result.retryAfterSeconds} s`
) =>
  HttpServerResponse.jsonUnsafe(
    { error: message, code: "RATE_LIMIT_EXCEEDED", message, request_id: requestId },
    { status: 429, headers: rateLimitHeaders(result, policy) }
  )

/** The `RateLimit-Policy` names of the failed-authentication budgets. */
const failurePolicy = { address: "auth-failures-per-ip", key_prefix: "auth-failures-per-key-prefix" } as const

/** The 429 of a credential refused unchecked because its address or key prefix failed too often. */
export const throttledCredentialResponse = (reason: CredentialsThrottled, requestId: string) =>
  tooMany(reason.state, failurePolicy[reason.by], requestId, reason.message)

const clientIp = (request: HttpServerRequest) => callerAddress(Option.getOrElse(request.remoteAddress, () => "unknown"), request.headers)

/** Past the rate limit: the 429; otherwise its headers on the answer and `service` for the handler. */
const admit = <I, S>(limit: RateLimitResult, policy: string, request: HttpServerRequest, key: Context.Key<I, S>, service: S): SyncOutcome => {
  if (!limit.allowed) return respond(tooMany(limit, policy, requestIdOf(request)))
  addResponseHeaders(request, rateLimitHeaders(limit, policy))
  return provide(key, service)
}

/**
 * The middleware below run on every request, so they are plain `flatMap`s (no
 * generator per request) and read the request from the fiber's context directly.
 * A refused credential counts against the caller's address (Access.authenticateClient);
 * past that budget the answer is 429 before the credential is looked up.
 */
export const AuthenticatedLive = Layer.effect(Authenticated)(
  Effect.gen(function* () {
    const access = yield* Access
    const now = access.now
    // A cached key with the in-process limiter: answered without an effect (see compiled/sync-middleware.ts).
    const bearerNow =
      now &&
      ((token: string, request: HttpServerRequest) => {
        const session = now.cachedSession(token)
        return session && admit(now.rateLimitPrincipal(session.principal), "per-key", request, CurrentPrincipal, session.principal)
      })
    return Object.assign(Authenticated.of({
      bearer: (httpEffect, { credential }) =>
        Effect.withFiber((fiber) => {
          const request = Context.getUnsafe(fiber.context, HttpServerRequest)
          const session = access.authenticateClient(Redacted.value(credential), () => clientIp(request))
          return Effect.matchEffect(session, {
            onFailure: ({ reason }) =>
              reason._tag === "CredentialsThrottled" ? Effect.succeed(throttledCredentialResponse(reason, requestIdOf(request))) : Effect.fail(reason),
            onSuccess: ({ principal }) =>
              Effect.flatMap(access.rateLimitPrincipal(principal), (limit) =>
                runOutcome(admit(limit, "per-key", request, CurrentPrincipal, principal), httpEffect)
              )
          })
        })
    }), bearerNow === undefined ? {} : { [syncSecurity]: { bearer: bearerNow } })
  })
)

const publicMiddleware = Effect.gen(function* () {
  const access = yield* Access
  const now = access.now
  const run = <E>(httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, CurrentClient>) =>
    Effect.withFiber((fiber) => {
      const request = Context.getUnsafe(fiber.context, HttpServerRequest)
      const ip = clientIp(request)
      return Effect.flatMap(access.rateLimitClient(ip), (limit) => runOutcome(admit(limit, "per-ip", request, CurrentClient, { ip }), httpEffect))
    })
  if (now === undefined) return run
  // With the in-process limiter the compiled routes take this path and skip the effect above.
  const runNow = (request: HttpServerRequest) => {
    const ip = clientIp(request)
    return admit(now.rateLimitClient(ip), "per-ip", request, CurrentClient, { ip })
  }
  return Object.assign(run, { [syncMiddleware]: runNow })
})

export const PublicRouteLive = Layer.effect(PublicRoute)(Effect.map(publicMiddleware, (run) => PublicRoute.of(run)))
export const OptionallyAuthenticatedLive = Layer.effect(OptionallyAuthenticated)(
  Effect.map(publicMiddleware, (run) => OptionallyAuthenticated.of(run))
)

export const AdminKeyLive = Layer.effect(AdminKey)(
  Effect.gen(function* () {
    const config = yield* Config
    const expected = config.adminKey ? Buffer.from(Redacted.value(config.adminKey)) : undefined
    return AdminKey.of({
      adminKey: (httpEffect, { credential }) => {
        const given = Buffer.from(Redacted.value(credential))
        if (expected === undefined || given.length !== expected.length || !timingSafeEqual(given, expected)) {
          return Effect.fail(unauthorized("A valid X-Admin-Key header is required"))
        }
        return httpEffect
      }
    })
  })
)

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const pathText = (path: ReadonlyArray<PropertyKey | { key: PropertyKey }> | undefined, kind: string) => {
  const segments = (path ?? []).map((segment) => String(typeof segment === "object" ? segment.key : segment))
  const prefix = kind === "Query" ? "query" : kind === "Params" ? "path" : kind === "Headers" ? "headers" : "body"
  return segments.length === 0 ? prefix : segments.join(".")
}

/**
 * 422 VALIDATION_ERROR listing every issue; a body that is not JSON at all (or
 * not UTF-8) is 400 INVALID_JSON.
 */
export const ErrorShapeLive = HttpApiMiddleware.layerSchemaErrorTransform(ErrorShape, (error) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest
    const requestId = requestIdOf(request)
    if (error.kind === "Payload" || error.kind === "Body") {
      const text = yield* Effect.option(request.text)
      let parses = Option.isSome(text)
      if (parses && Option.isSome(text) && text.value !== "") {
        try {
          JSON.parse(text.value)
        } catch {
          parses = false
        }
      }
      if (!parses) {
        const message = "Request body is not valid JSON"
        return HttpServerResponse.jsonUnsafe({ code: "INVALID_JSON", message, details: {}, request_id: requestId }, { status: 400 })
      }
    }
    const result = formatter(error.cause.issue)
    const issues = result.issues.map((issue) => ({ path: pathText(issue.path as any, error.kind), message: issue.message }))
    return HttpServerResponse.jsonUnsafe(
      { code: "VALIDATION_ERROR", message: validationMessage(issues), details: { issues }, request_id: requestId },
      { status: 422 }
    )
  })
)
