/** Why a mutual-signing step was refused (spec 001: codes per endpoint, checked in the spec's order). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

export class ActionNotFound extends Schema.TaggedError<ActionNotFound>()("ActionNotFound", { action_uuid: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = "No such action, or no mutual-signing request for it"
  readonly details = { action_uuid: this.action_uuid }
}

export class NoAgent extends Schema.TaggedError<NoAgent>()("NoAgent", { action_uuid: Schema.String }) {
  readonly code = "MUTUAL_SIGN_NO_AGENT"
  override readonly message = "The action has no agent registered to this organization to sign for it"
  readonly details = { action_uuid: this.action_uuid }
}

export class NoDidKey extends Schema.TaggedError<NoDidKey>()("NoDidKey", { action_uuid: Schema.String }) {
  readonly code = "MUTUAL_SIGN_NO_DID_KEY"
  override readonly message = "The action's agent has no DID key"
  readonly details = { action_uuid: this.action_uuid }
}

export class AlreadyRequested extends Schema.TaggedError<AlreadyRequested>()("AlreadyRequested", { action_uuid: Schema.String }) {
  readonly code = "MUTUAL_SIGN_ALREADY_REQUESTED"
  override readonly message = "Mutual signing was already requested for this action"
  readonly details = { action_uuid: this.action_uuid }
}

export class NotPending extends Schema.TaggedError<NotPending>()("NotPending", { action_uuid: Schema.String }) {
  readonly code = "MUTUAL_SIGN_NOT_PENDING"
  override readonly message = "The mutual-signing request is no longer pending"
  readonly details = { action_uuid: this.action_uuid }
}

export class Expired extends Schema.TaggedError<Expired>()("Expired", { action_uuid: Schema.String }) {
  readonly code = "MUTUAL_SIGN_EXPIRED"
  override readonly message = "The mutual-signing request expired"
  readonly details = { action_uuid: this.action_uuid }
}

export class DidMismatch extends Schema.TaggedError<DidMismatch>()("DidMismatch", { action_uuid: Schema.String }) {
  readonly code = "MUTUAL_SIGN_DID_MISMATCH"
  override readonly message = "The DID is not the requested counterparty"
  readonly details = { action_uuid: this.action_uuid }
}

export class NoVerificationMethod extends Schema.TaggedError<NoVerificationMethod>()("NoVerificationMethod", { action_uuid: Schema.String }) {
  readonly code = "DID_NO_VERIFICATION_METHOD"
  override readonly message = "The counterparty's DID document has no usable verification method"
  readonly details = { action_uuid: this.action_uuid }
}

export class UnsupportedKeyFormat extends Schema.TaggedError<UnsupportedKeyFormat>()("UnsupportedKeyFormat", { action_uuid: Schema.String }) {
  readonly code = "DID_UNSUPPORTED_KEY_FORMAT"
  override readonly message = "The counterparty's DID keys are not Ed25519VerificationKey2020 with a base58btc multibase key"
  readonly details = { action_uuid: this.action_uuid }
}

export class InvalidSignature extends Schema.TaggedError<InvalidSignature>()("InvalidSignature", { action_uuid: Schema.String }) {
  readonly code = "MUTUAL_SIGN_INVALID_SIGNATURE"
  override readonly message = "The signature does not verify against the counterparty's DID key"
  readonly details = { action_uuid: this.action_uuid }
}

export class PayloadMismatch extends Schema.TaggedError<PayloadMismatch>()("PayloadMismatch", { action_uuid: Schema.String }) {
  readonly code = "MUTUAL_SIGN_PAYLOAD_MISMATCH"
  override readonly message = "signed_payload_hash is not the payload's hash"
  readonly details = { action_uuid: this.action_uuid }
}

export class NotCompleted extends Schema.TaggedError<NotCompleted>()("NotCompleted", { action_uuid: Schema.String }) {
  readonly code = "MUTUAL_SIGN_NOT_COMPLETED"
  override readonly message = "The mutual signature is not completed"
  readonly details = { action_uuid: this.action_uuid }
}

export class MutualSignError extends Schema.TaggedError<MutualSignError>()("MutualSignError", {
  reason: Schema.Union([
    ActionNotFound,
    NoAgent,
    NoDidKey,
    AlreadyRequested,
    NotPending,
    Expired,
    DidMismatch,
    NoVerificationMethod,
    UnsupportedKeyFormat,
    InvalidSignature,
    PayloadMismatch,
    NotCompleted
  ])
}) {}

export const refuse = (reasonOf: MutualSignError["reason"]) => Effect.fail(new MutualSignError({ reason: reasonOf }))
