/**
 * Single sign-on (spec 002 "Single sign-on"): public entry points that end in a one-time
 * exchange code turned into a JWT, and the owner's administration of the organization's
 * SAML or OIDC configuration.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated, PublicRoute } from "./auth.js"
import { accessRefusal, refusal } from "./errors.js"

const Text = (max: number) => Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(max))
const Domain = Schema.String.check(Schema.isMaxLength(253), Schema.isPattern(/^[a-z0-9.-]+\.[a-z]{2,}$/i)).annotate({ description: "an e-mail domain" })
const Domains = Schema.Array(Domain).check(Schema.isMaxLength(50))

export const SsoConfiguration = Schema.Struct({
  enabled: Schema.Boolean,
  enforced: Schema.Boolean,
  protocol: Schema.NullOr(Schema.Literals(["saml", "oidc"])),
  idp_entity_id: Schema.NullOr(Schema.String),
  sp_entity_id: Schema.NullOr(Schema.String),
  sp_acs_url: Schema.NullOr(Schema.String),
  sp_metadata_url: Schema.NullOr(Schema.String),
  oidc_issuer_url: Schema.NullOr(Schema.String),
  oidc_client_id: Schema.NullOr(Schema.String),
  domains: Schema.Array(Schema.String)
})
export type SsoConfiguration = typeof SsoConfiguration.Type

const Redirect = HttpApiSchema.Empty(302)
const SlugParam = { org_slug: Schema.String.check(Schema.isMaxLength(100)) }

export const AcsForm = Schema.Struct({ SAMLResponse: Text(1_000_000), RelayState: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(100))) })

/* Refusals of single sign-on (spec 002 "Single sign-on" and its error table). */

export class SsoOwnerOnly extends Schema.Error<SsoOwnerOnly>("SsoOwnerOnly")(
  // The body has always carried an empty `details`.
  { ...accessRefusal("FORBIDDEN", "Single sign-on administration requires the owner role"), details: refusal("FORBIDDEN").details },
  { httpApiStatus: 403, description: "Single sign-on administration requires the owner role" }
) {
  readonly _tag = "SsoOwnerOnly"
}

export class PlanRequired extends Schema.Error<PlanRequired>("PlanRequired")(
  accessRefusal("PLAN_REQUIRED", "Single sign-on requires the Business plan or higher"),
  { httpApiStatus: 403, description: "Single sign-on requires the Business plan or higher (`details.plan`, `details.required`)" }
) {
  readonly _tag = "PlanRequired"
  static of(plan: string) {
    return new PlanRequired({ details: { plan, required: "business" } })
  }
}

export class ConfigInvalid extends Schema.Error<ConfigInvalid>("ConfigInvalid")(refusal("SSO_CONFIG_ERROR"), {
  httpApiStatus: 400,
  description: "The identity provider's metadata, issuer, credentials or domains are refused (`details.problem`)"
}) {
  readonly _tag = "ConfigInvalid"
  static of(problem: string) {
    return new ConfigInvalid({ message: `Invalid SSO configuration: ${problem}`, details: { problem } })
  }
}

export class NotConfigured extends Schema.Error<NotConfigured>("NotConfigured")(
  refusal("SSO_ENFORCE_ERROR", "Single sign-on must be configured before it can be enforced"),
  { httpApiStatus: 400, description: "Single sign-on must be configured before it can be enforced" }
) {
  readonly _tag = "NotConfigured"
}

export class ExchangeRefused extends Schema.Error<ExchangeRefused>("ExchangeRefused")(
  refusal("SSO_EXCHANGE_ERROR", "The code is invalid, expired or already used"),
  { httpApiStatus: 400, description: "The code is invalid, expired or already used" }
) {
  readonly _tag = "ExchangeRefused"
}

export class MetadataNotFound extends Schema.Error<MetadataNotFound>("MetadataNotFound")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "No organization with this slug"
}) {
  readonly _tag = "MetadataNotFound"
  static of(orgSlug: string) {
    return new MetadataNotFound({ message: `No organization ${orgSlug}`, details: { org_slug: orgSlug } })
  }
}

export class SsoPublicGroup extends HttpApiGroup.make("ssoPublic")
  .add(
    HttpApiEndpoint.get("check", "/api/v1/auth/sso/check", {
      query: { email: Schema.String.check(Schema.isMaxLength(320), Schema.isPattern(/^[^\s@]{1,64}@[^\s@]{1,255}$/)) },
      success: Schema.Struct({ sso_enabled: Schema.Boolean, enforced: Schema.Boolean, org_slug: Schema.NullOr(Schema.String) })
    }).middleware(PublicRoute),
    HttpApiEndpoint.get("login", "/api/v1/auth/sso/login/:org_slug", { params: SlugParam, success: Redirect }).middleware(PublicRoute),
    HttpApiEndpoint.post("acs", "/api/v1/auth/sso/acs", {
      payload: AcsForm.pipe(HttpApiSchema.asFormUrlEncoded()),
      success: Redirect
    }).middleware(PublicRoute),
    HttpApiEndpoint.get("oidcLogin", "/api/v1/auth/sso/oidc/login/:org_slug", { params: SlugParam, success: Redirect }).middleware(PublicRoute),
    HttpApiEndpoint.get("oidcCallback", "/api/v1/auth/sso/oidc/callback", {
      query: { code: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(4096))), state: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(512))), iss: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(2048))), error: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(512))) },
      success: Redirect
    }).middleware(PublicRoute),
    HttpApiEndpoint.post("exchange", "/api/v1/auth/sso/exchange", {
      error: ExchangeRefused,
      payload: Schema.Struct({ code: Text(200) }),
      success: Schema.Struct({ token: Schema.String, expires_in: Schema.Number, org_uuid: Schema.String, user_uuid: Schema.String })
    }).middleware(PublicRoute),
    HttpApiEndpoint.get("metadata", "/api/v1/auth/sso/metadata/:org_slug", {
      error: MetadataNotFound,
      params: SlugParam,
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "application/samlmetadata+xml" }))
    }).middleware(PublicRoute)
  )
  .annotateMerge(
    OpenApi.annotations({
      title: "Single sign-on (public)",
      description: "Check by e-mail domain, redirect to the identity provider, SAML ACS and OIDC callback, one-time code exchanged for a JWT, SP metadata."
    })
  )
{}

export class SsoGroup extends HttpApiGroup.make("sso")
  .add(
    HttpApiEndpoint.post("configure", "/api/v1/sso/configure", {
      error: [SsoOwnerOnly, PlanRequired, ConfigInvalid],
      payload: Schema.Struct({ idp_metadata_xml: Text(200_000), domains: Schema.optionalKey(Domains) }),
      success: SsoConfiguration
    }),
    HttpApiEndpoint.post("configureOidc", "/api/v1/sso/configure-oidc", {
      error: [SsoOwnerOnly, PlanRequired, ConfigInvalid],
      payload: Schema.Struct({ client_id: Text(512), client_secret: Text(2048), issuer_url: Text(2048), domains: Schema.optionalKey(Domains) }),
      success: SsoConfiguration
    }),
    HttpApiEndpoint.post("enforce", "/api/v1/sso/enforce", {
      error: [SsoOwnerOnly, NotConfigured],
      payload: Schema.Struct({ enforce: Schema.Boolean }),
      success: Schema.Struct({ message: Schema.String })
    }),
    HttpApiEndpoint.get("show", "/api/v1/sso", { error: SsoOwnerOnly, success: SsoConfiguration }),
    HttpApiEndpoint.delete("remove", "/api/v1/sso", { error: SsoOwnerOnly, success: HttpApiSchema.NoContent })
  )
  .middleware(Authenticated)
  .annotateMerge(OpenApi.annotations({ title: "Single sign-on", description: "The owner configures SAML or OIDC (Business plan or higher) and enforces it for the organization's domains." }))
{}
