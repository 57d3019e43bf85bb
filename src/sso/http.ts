/** Handlers of `/api/v1/auth/sso/*` (public browser flow and exchange) and `/api/v1/sso*` (owner administration, JWT only). */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { HttpApiBuilder } from "effect/http-api"
import * as Layer from "effect/Layer"
import { GatewayApi } from "../../protocol/api.js"
import { requireJwt } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { refusals } from "../platform/wire-errors.js"
import { Sso } from "./service.js"

const configureErrors = refusals("SsoError", "SsoOwnerOnly", "PlanRequired", "ConfigInvalid")
const ownerErrors = refusals("SsoError", "SsoOwnerOnly")

// The redirect carries a one-time code or an error; nothing may cache it.
const redirect = (location: string) => HttpServerResponse.redirect(location, { status: 302, headers: { "cache-control": "no-store", "referrer-policy": "no-referrer" } })

const auditContext = Effect.map(HttpServerRequest, (request) => ({ requestId: requestIdOf(request) }))

export const SsoPublicHttp = HttpApiBuilder.group(GatewayApi, "ssoPublic", (handlers) =>
  Effect.gen(function* () {
    const sso = yield* Sso
    return handlers
      .handle("check", ({ query }) => sso.check(query.email))
      .handle("login", ({ params }) => Effect.map(sso.login(params.org_slug), redirect))
      .handle("acs", ({ payload }) => Effect.map(sso.acs(payload.SAMLResponse, payload.RelayState), redirect))
      .handle("oidcLogin", ({ params }) => Effect.map(sso.login(params.org_slug, "oidc"), redirect))
      .handle("oidcCallback", ({ query }) => Effect.map(sso.oidcCallback(query), redirect))
      .handle("exchange", ({ payload }) => sso.exchange(payload.code).pipe(refusals("SsoError", "ExchangeRefused")))
      .handle("metadata", ({ params }) =>
        Effect.map(sso.metadata(params.org_slug).pipe(refusals("SsoError", "MetadataNotFound")), (xml) => HttpServerResponse.text(xml, { contentType: "application/samlmetadata+xml" }))
      )
  })
)

export const SsoAdminHttp = HttpApiBuilder.group(GatewayApi, "sso", (handlers) =>
  Effect.gen(function* () {
    const sso = yield* Sso
    return handlers
      .handle("configure", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* sso.configureSaml(principal, payload, yield* auditContext).pipe(configureErrors)
        })
      )
      .handle("configureOidc", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* sso.configureOidc(principal, payload, yield* auditContext).pipe(configureErrors)
        })
      )
      .handle("enforce", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* sso.enforce(principal, payload.enforce, yield* auditContext).pipe(refusals("SsoError", "SsoOwnerOnly", "NotConfigured"))
        })
      )
      .handle("show", () => Effect.flatMap(requireJwt, (principal) => sso.show(principal).pipe(ownerErrors)))
      .handle("remove", () =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          yield* sso.remove(principal, yield* auditContext).pipe(ownerErrors)
        })
      )
  })
)

export const SsoHttp = Layer.mergeAll(SsoPublicHttp, SsoAdminHttp)
