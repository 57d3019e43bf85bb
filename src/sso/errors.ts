/** Why a single sign-on step was refused (spec 002 "Single sign-on" and its error table). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

export class OwnerOnly extends Schema.TaggedError<OwnerOnly>()("OwnerOnly", {}) {
  readonly code = "FORBIDDEN"
  override readonly message = "Single sign-on administration requires the owner role"
  readonly details = {}
}

export class PlanRequired extends Schema.TaggedError<PlanRequired>()("PlanRequired", { plan: Schema.String }) {
  readonly code = "PLAN_REQUIRED"
  override readonly message = "Single sign-on requires the Business plan or higher"
  readonly details = { plan: this.plan, required: "business" }
}

export class ConfigInvalid extends Schema.TaggedError<ConfigInvalid>()("ConfigInvalid", { problem: Schema.String }) {
  readonly code = "SSO_CONFIG_ERROR"
  override readonly message = `Invalid SSO configuration: ${this.problem}`
  readonly details = { problem: this.problem }
}

export class NotConfigured extends Schema.TaggedError<NotConfigured>()("NotConfigured", {}) {
  readonly code = "SSO_ENFORCE_ERROR"
  override readonly message = "Single sign-on must be configured before it can be enforced"
  readonly details = {}
}

export class ExchangeRefused extends Schema.TaggedError<ExchangeRefused>()("ExchangeRefused", {}) {
  readonly code = "SSO_EXCHANGE_ERROR"
  override readonly message = "The code is invalid, expired or already used"
  readonly details = {}
}

export class MetadataNotFound extends Schema.TaggedError<MetadataNotFound>()("MetadataNotFound", { org_slug: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `No organization ${this.org_slug}`
  readonly details = { org_slug: this.org_slug }
}

export class SsoError extends Schema.TaggedError<SsoError>()("SsoError", {
  reason: Schema.Union([OwnerOnly, PlanRequired, ConfigInvalid, NotConfigured, ExchangeRefused, MetadataNotFound])
}) {}

export const refuse = (reason: SsoError["reason"]) => Effect.fail(new SsoError({ reason }))

/** What a failed browser step says in its error redirect (the spec's `error=` values). */
export type RedirectError = "org_not_found" | "sso_not_configured" | "sso_validation_failed" | "sso_failed"
