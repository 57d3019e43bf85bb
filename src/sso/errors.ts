/** Why a single sign-on step was refused: the area's one error, whose reasons are the wire's refusals (spec 002 "Single sign-on"). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { ConfigInvalid, ExchangeRefused, MetadataNotFound, NotConfigured, PlanRequired, SsoOwnerOnly } from "../../protocol/sso.js"
import { Reasons } from "../platform/domain-error.js"

export { ConfigInvalid, ExchangeRefused, MetadataNotFound, NotConfigured, PlanRequired, SsoOwnerOnly }

export class SsoError extends Schema.TaggedError<SsoError>()("SsoError", {
  reason: Reasons([SsoOwnerOnly, PlanRequired, ConfigInvalid, NotConfigured, ExchangeRefused, MetadataNotFound])
}) {}

export const refuse = (reason: SsoError["reason"]) => Effect.fail(new SsoError({ reason }))

/** What a failed browser step says in its error redirect (the spec's `error=` values). */
export type RedirectError = "org_not_found" | "sso_not_configured" | "sso_validation_failed" | "sso_failed"
