/** Handlers of `/api/v1/auth/sso/*` (public browser flow and exchange) and `/api/v1/sso*` (owner administration, JWT only). */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { HttpApiBuilder } from "effect/http-api"
import * as Layer from "effect/Layer"
import { GatewayApi } from "../../protocol/api.js"
import { BadRequest, Forbidden, NotFound } from "../../protocol/errors.js"
import { requireJwt } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { answer } from "../platform/wire-errors.js"
import { Sso } from "./service.js"

const configureErrors = answer({ OwnerOnly: Forbidden, PlanRequired: Forbidden, ConfigInvalid: BadRequest })
const enforceErrors = answer({ OwnerOnly: Forbidden, NotConfigured: BadRequest })
const ownerErrors = answer({ OwnerOnly: Forbidden })
const exchangeErrors = answer({ ExchangeRefused: BadRequest })
const metadataErrors = answer({ MetadataNotFound: NotFound })

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
      .handle("exchange", ({ payload }) => exchangeErrors(sso.exchange(payload.code)))
      .handle("metadata", ({ params }) =>
        Effect.map(metadataErrors(sso.metadata(params.org_slug)), (xml) => HttpServerResponse.text(xml, { contentType: "application/samlmetadata+xml" }))
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
          return yield* configureErrors(sso.configureSaml(principal, payload, yield* auditContext))
        })
      )
      .handle("configureOidc", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* configureErrors(sso.configureOidc(principal, payload, yield* auditContext))
        })
      )
      .handle("enforce", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* enforceErrors(sso.enforce(principal, payload.enforce, yield* auditContext))
        })
      )
      .handle("show", () => Effect.flatMap(requireJwt, (principal) => ownerErrors(sso.show(principal))))
      .handle("remove", () =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          yield* ownerErrors(sso.remove(principal, yield* auditContext))
        })
      )
  })
)

export const SsoHttp = Layer.mergeAll(SsoPublicHttp, SsoAdminHttp)
