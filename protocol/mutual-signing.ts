/**
 * Mutual signing (spec 001 "Mutual signing"): a counterparty co-signs an action with the Ed25519
 * key of its own DID document; both signatures over the JCS payload seal one receipt.
 */

import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated, PublicRoute } from "./auth.js"
import { Ed25519Signature, NullableTimestamp, Sha256Hash, Timestamp } from "./common.js"
import { accessRefusal, Forbidden, refusal } from "./errors.js"

const DidWeb = Schema.String.check(Schema.isMaxLength(2048), Schema.isPattern(/^did:web:[^\s]+$/)).annotate({ description: "a did:web identifier" })

export const MutualSignPayload = Schema.Struct({
  action_uuid: Schema.String,
  org_uuid: Schema.String,
  agent_id: Schema.String,
  action_type: Schema.String,
  action_details_hash: Schema.String,
  instruction_hash: Schema.NullOr(Schema.String),
  model_id: Schema.NullOr(Schema.String),
  created_at: Timestamp
})
export type MutualSignPayload = typeof MutualSignPayload.Type

const MutualSignStatus = Schema.Literals(["pending", "completed", "rejected", "expired"])

/** What every read of a request shows. */
const Requested = {
  action_uuid: Schema.String,
  status: MutualSignStatus,
  initiator_did: Schema.NullOr(Schema.String),
  counterparty_did: Schema.String,
  payload: MutualSignPayload,
  payload_hash: Schema.String,
  initiator_signature: Schema.String
}

export const PendingMutualSign = Schema.Struct({ ...Requested, expires_at: Timestamp, requested_at: Timestamp })

export const MutualSignReceipt = Schema.Struct({
  ...Requested,
  counterparty_signature: Schema.NullOr(Schema.String),
  counterparty_signed_at: NullableTimestamp,
  combined_receipt_hash: Schema.NullOr(Schema.String),
  sealed_at: NullableTimestamp
})

export type PendingMutualSign = typeof PendingMutualSign.Type
export type MutualSignReceipt = typeof MutualSignReceipt.Type

export const MutualSignRequested = Schema.Struct({
  action_uuid: Schema.String,
  status: Schema.Literal("pending"),
  counterparty_did: Schema.String,
  payload_hash: Schema.String,
  initiator_signature: Schema.String,
  expires_at: Timestamp,
  requested_at: Timestamp
})
export type MutualSignRequested = typeof MutualSignRequested.Type

export const MutualSignCompleted = Schema.Struct({
  action_uuid: Schema.String,
  status: Schema.Literal("completed"),
  combined_receipt_hash: Schema.String,
  sealed_at: Timestamp
})
export type MutualSignCompleted = typeof MutualSignCompleted.Type

export const MutualSignRejected = Schema.Struct({ action_uuid: Schema.String, status: Schema.Literal("rejected"), reason: Schema.String })
export type MutualSignRejected = typeof MutualSignRejected.Type

/* Refusals, in the spec's codes; each names the action in `details.action_uuid`. */

export class MutualSignNotFound extends Schema.Error<MutualSignNotFound>("MutualSignNotFound")(refusal("NOT_FOUND", "No such action, or no mutual-signing request for it"), {
  httpApiStatus: 404,
  description: "No such action, or no mutual-signing request for it"
}) {
  readonly _tag = "MutualSignNotFound"
  static of(action_uuid: string) {
    return new MutualSignNotFound({ details: { action_uuid } })
  }
}

export class MutualSignNoAgent extends Schema.Error<MutualSignNoAgent>("MutualSignNoAgent")(refusal("MUTUAL_SIGN_NO_AGENT", "The action has no agent registered to this organization to sign for it"), {
  httpApiStatus: 400,
  description: "The action has no agent of this organization to sign for it"
}) {
  readonly _tag = "MutualSignNoAgent"
  static of(action_uuid: string) {
    return new MutualSignNoAgent({ details: { action_uuid } })
  }
}

export class MutualSignNoDidKey extends Schema.Error<MutualSignNoDidKey>("MutualSignNoDidKey")(refusal("MUTUAL_SIGN_NO_DID_KEY", "The action's agent has no DID key"), {
  httpApiStatus: 400,
  description: "The action's agent has no DID key"
}) {
  readonly _tag = "MutualSignNoDidKey"
  static of(action_uuid: string) {
    return new MutualSignNoDidKey({ details: { action_uuid } })
  }
}

export class MutualSignAlreadyRequested extends Schema.Error<MutualSignAlreadyRequested>("MutualSignAlreadyRequested")(refusal("MUTUAL_SIGN_ALREADY_REQUESTED", "Mutual signing was already requested for this action"), {
  httpApiStatus: 409,
  description: "Mutual signing was already requested for this action"
}) {
  readonly _tag = "MutualSignAlreadyRequested"
  static of(action_uuid: string) {
    return new MutualSignAlreadyRequested({ details: { action_uuid } })
  }
}

export class MutualSignNotPending extends Schema.Error<MutualSignNotPending>("MutualSignNotPending")(refusal("MUTUAL_SIGN_NOT_PENDING", "The mutual-signing request is no longer pending"), {
  httpApiStatus: 400,
  description: "The request was completed or rejected"
}) {
  readonly _tag = "MutualSignNotPending"
  static of(action_uuid: string) {
    return new MutualSignNotPending({ details: { action_uuid } })
  }
}

export class MutualSignExpired extends Schema.Error<MutualSignExpired>("MutualSignExpired")(refusal("MUTUAL_SIGN_EXPIRED", "The mutual-signing request expired"), {
  httpApiStatus: 410,
  description: "The request lapsed"
}) {
  readonly _tag = "MutualSignExpired"
  static of(action_uuid: string) {
    return new MutualSignExpired({ details: { action_uuid } })
  }
}

export class MutualSignDidMismatch extends Schema.Error<MutualSignDidMismatch>("MutualSignDidMismatch")(accessRefusal("MUTUAL_SIGN_DID_MISMATCH", "The DID is not the requested counterparty"), {
  httpApiStatus: 403,
  description: "The DID is not the requested counterparty"
}) {
  readonly _tag = "MutualSignDidMismatch"
  static of(action_uuid: string) {
    return new MutualSignDidMismatch({ details: { action_uuid } })
  }
}

export class DidNoVerificationMethod extends Schema.Error<DidNoVerificationMethod>("DidNoVerificationMethod")(refusal("DID_NO_VERIFICATION_METHOD", "The counterparty's DID document has no usable verification method"), {
  httpApiStatus: 400,
  description: "The counterparty's DID did not resolve, or its document has no verification method"
}) {
  readonly _tag = "DidNoVerificationMethod"
  static of(action_uuid: string) {
    return new DidNoVerificationMethod({ details: { action_uuid } })
  }
}

export class DidUnsupportedKeyFormat extends Schema.Error<DidUnsupportedKeyFormat>("DidUnsupportedKeyFormat")(refusal("DID_UNSUPPORTED_KEY_FORMAT", "The counterparty's DID keys are not Ed25519VerificationKey2020 with a base58btc multibase key"), {
  httpApiStatus: 400,
  description: "The counterparty's DID keys are not Ed25519VerificationKey2020 multibase keys"
}) {
  readonly _tag = "DidUnsupportedKeyFormat"
  static of(action_uuid: string) {
    return new DidUnsupportedKeyFormat({ details: { action_uuid } })
  }
}

export class MutualSignInvalidSignature extends Schema.Error<MutualSignInvalidSignature>("MutualSignInvalidSignature")(refusal("MUTUAL_SIGN_INVALID_SIGNATURE", "The signature does not verify against the counterparty's DID key"), {
  httpApiStatus: 400,
  description: "The signature does not verify against the counterparty's DID key"
}) {
  readonly _tag = "MutualSignInvalidSignature"
  static of(action_uuid: string) {
    return new MutualSignInvalidSignature({ details: { action_uuid } })
  }
}

export class MutualSignPayloadMismatch extends Schema.Error<MutualSignPayloadMismatch>("MutualSignPayloadMismatch")(refusal("MUTUAL_SIGN_PAYLOAD_MISMATCH", "signed_payload_hash is not the payload's hash"), {
  httpApiStatus: 400,
  description: "signed_payload_hash is not the payload's hash"
}) {
  readonly _tag = "MutualSignPayloadMismatch"
  static of(action_uuid: string) {
    return new MutualSignPayloadMismatch({ details: { action_uuid } })
  }
}

export class MutualSignNotCompleted extends Schema.Error<MutualSignNotCompleted>("MutualSignNotCompleted")(refusal("MUTUAL_SIGN_NOT_COMPLETED", "The mutual signature is not completed"), {
  httpApiStatus: 400,
  description: "The mutual signature is not completed"
}) {
  readonly _tag = "MutualSignNotCompleted"
  static of(action_uuid: string) {
    return new MutualSignNotCompleted({ details: { action_uuid } })
  }
}

const ActionParam = { action_uuid: Schema.String }
const PATH = "/api/v1/actions/:action_uuid/mutual-sign"

export class MutualSignGroup extends HttpApiGroup.make("mutualSign")
  .add(
    HttpApiEndpoint.post("request", `${PATH}/request`, {
      error: [Forbidden, MutualSignNotFound, MutualSignNoAgent, MutualSignNoDidKey, MutualSignAlreadyRequested],
      params: ActionParam,
      payload: Schema.Struct({ counterparty_did: DidWeb }),
      success: MutualSignRequested
    })
  )
  .middleware(Authenticated)
  .annotateMerge(OpenApi.annotations({ title: "Mutual signing", description: "Ask a counterparty, by its did:web, to co-sign an action." }))
{}

export class MutualSignPublicGroup extends HttpApiGroup.make("mutualSignPublic")
  .add(
    HttpApiEndpoint.get("pending", `${PATH}/pending`, { error: MutualSignNotFound, params: ActionParam, success: PendingMutualSign }).middleware(PublicRoute),
    HttpApiEndpoint.post("complete", `${PATH}/complete`, {
      error: [
        MutualSignNotFound,
        MutualSignNotPending,
        MutualSignExpired,
        MutualSignDidMismatch,
        DidNoVerificationMethod,
        DidUnsupportedKeyFormat,
        MutualSignInvalidSignature,
        MutualSignPayloadMismatch
      ],
      params: ActionParam,
      payload: Schema.Struct({ did: DidWeb, signature: Ed25519Signature, signed_payload_hash: Sha256Hash }),
      success: MutualSignCompleted
    }).middleware(PublicRoute),
    HttpApiEndpoint.get("receipt", `${PATH}/receipt`, { error: [MutualSignNotFound, MutualSignNotCompleted], params: ActionParam, success: MutualSignReceipt }).middleware(PublicRoute),
    HttpApiEndpoint.post("reject", `${PATH}/reject`, { error: [MutualSignNotFound, MutualSignNotPending],
      params: ActionParam,
      // The body is optional: no body, null or {} reject with reason "".
      payload: [Schema.Struct({ reason: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(2000)))) }), Schema.Null],
      success: MutualSignRejected
    }).middleware(PublicRoute)
  )
  .annotateMerge(
    OpenApi.annotations({
      title: "Mutual signing (counterparty)",
      description: "The counterparty proves itself by its Ed25519 signature over the JCS payload, verified with the key of its DID document."
    })
  )
{}
