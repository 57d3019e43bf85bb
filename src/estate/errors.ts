/** Why an estate operation was refused (spec 001 "Estate (K)" codes). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { SUCCESSION_POLICIES } from "../../protocol/estate.js"
import { InvalidInput } from "../platform/domain-error.js"

export class AgentNotFound extends Schema.TaggedError<AgentNotFound>()("AgentNotFound", { agent_slug: Schema.String }) {
  readonly code = "AGENT_NOT_FOUND"
  override readonly message = `Agent ${this.agent_slug} not found`
  readonly details = { agent_slug: this.agent_slug }
}

export class SuccessorNotFound extends Schema.TaggedError<SuccessorNotFound>()("SuccessorNotFound", { successor_slug: Schema.String }) {
  readonly code = "SUCCESSOR_NOT_FOUND"
  override readonly message = `Successor ${this.successor_slug} is not another agent of this organization`
  readonly details = { successor_slug: this.successor_slug }
}

export class InvalidPolicy extends Schema.TaggedError<InvalidPolicy>()("InvalidPolicy", { succession_policy: Schema.String }) {
  readonly code = "INVALID_POLICY"
  override readonly message = `succession_policy must be one of ${SUCCESSION_POLICIES.join(", ")}`
  readonly details = { succession_policy: this.succession_policy, allowed: [...SUCCESSION_POLICIES] }
}

export class WillNotFound extends Schema.TaggedError<WillNotFound>()("WillNotFound", { agent_slug: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `Agent ${this.agent_slug} has no will`
  readonly details = { agent_slug: this.agent_slug }
}

export class CertificateNotFound extends Schema.TaggedError<CertificateNotFound>()("CertificateNotFound", { agent_slug: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `Agent ${this.agent_slug} has no death certificate`
  readonly details = { agent_slug: this.agent_slug }
}

export class AlreadyDeceased extends Schema.TaggedError<AlreadyDeceased>()("AlreadyDeceased", { agent_slug: Schema.String }) {
  readonly code = "ALREADY_DECEASED"
  override readonly message = `Agent ${this.agent_slug} already has a death certificate`
  readonly details = { agent_slug: this.agent_slug }
}

export class NotDecommissioned extends Schema.TaggedError<NotDecommissioned>()("NotDecommissioned", { agent_slug: Schema.String }) {
  readonly code = "NOT_DECOMMISSIONED"
  override readonly message = `Agent ${this.agent_slug} must be decommissioned before a death certificate is issued`
  readonly details = { agent_slug: this.agent_slug }
}

export class EmptyFindings extends Schema.TaggedError<EmptyFindings>()("EmptyFindings", {}) {
  readonly code = "EMPTY_FINDINGS"
  override readonly message = "findings must hold at least one finding"
  readonly details = {}
}

export class EstateError extends Schema.TaggedError<EstateError>()("EstateError", {
  reason: Schema.Union([
    AgentNotFound,
    SuccessorNotFound,
    InvalidPolicy,
    WillNotFound,
    CertificateNotFound,
    AlreadyDeceased,
    NotDecommissioned,
    EmptyFindings,
    InvalidInput
  ])
}) {}

export const refuse = (reason: EstateError["reason"]) => Effect.fail(new EstateError({ reason }))
