/** Why an agent-registry operation was refused. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AgentNotFound, InvalidInput } from "../platform/domain-error.js"

export class InvalidSlug extends Schema.TaggedError<InvalidSlug>()("InvalidSlug", { agent_slug: Schema.String }) {
  readonly code = "INVALID_SLUG"
  override readonly message = "agent_slug must be 3-64 characters of lowercase letters, digits and hyphens"
  readonly details = { agent_slug: this.agent_slug }
}

export class SlugTaken extends Schema.TaggedError<SlugTaken>()("SlugTaken", { agent_slug: Schema.String }) {
  readonly code = "SLUG_TAKEN"
  override readonly message = `The agent slug ${this.agent_slug} is already registered`
  readonly details = { agent_slug: this.agent_slug }
}

export class VersionExists extends Schema.TaggedError<VersionExists>()("VersionExists", { agent_slug: Schema.String, version: Schema.String }) {
  readonly code = "VERSION_EXISTS"
  override readonly message = `Version ${this.version} of ${this.agent_slug} is already published`
  readonly details = { agent_slug: this.agent_slug, version: this.version }
}

export class AgentDecommissioned extends Schema.TaggedError<AgentDecommissioned>()("AgentDecommissioned", { agent_slug: Schema.String }) {
  readonly code = "AGENT_DECOMMISSIONED"
  override readonly message = `Agent ${this.agent_slug} is decommissioned`
  readonly details = { agent_slug: this.agent_slug }
}

export class InvalidSignature extends Schema.TaggedError<InvalidSignature>()("InvalidSignature", { agent_slug: Schema.String }) {
  readonly code = "INVALID_SIGNATURE"
  override readonly message = "signature is not the owner's signature of this transfer (see docs/decisions.md: hmac-sha256 of the JCS terms, keyed by the request's bearer credential)"
  readonly details = { agent_slug: this.agent_slug }
}

export class TargetOrgNotFound extends Schema.TaggedError<TargetOrgNotFound>()("TargetOrgNotFound", { target_org_id: Schema.String }) {
  readonly code = "TARGET_ORG_NOT_FOUND"
  override readonly message = `Organization ${this.target_org_id} not found`
  readonly details = { target_org_id: this.target_org_id }
}

export class AgentsError extends Schema.TaggedError<AgentsError>()("AgentsError", {
  reason: Schema.Union([AgentNotFound, InvalidSlug, SlugTaken, VersionExists, AgentDecommissioned, InvalidSignature, TargetOrgNotFound, InvalidInput])
}) {}

export { AgentNotFound }

export const refuse = (reason: AgentsError["reason"]) => Effect.fail(new AgentsError({ reason }))
