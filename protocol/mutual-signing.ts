/**
 * Mutual signing (spec 001 "Mutual signing"): a counterparty co-signs an action with the Ed25519
 * key of its own DID document; both signatures over the JCS payload seal one receipt.
 */

import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated, PublicRoute } from "./auth.js"
import { Ed25519Signature, NullableTimestamp, Sha256Hash, Timestamp } from "./common.js"
import { BadRequest, Conflict, Forbidden, Gone, NotFound } from "./errors.js"

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

const ActionParam = { action_uuid: Schema.String }
const PATH = "/api/v1/actions/:action_uuid/mutual-sign"

export class MutualSignGroup extends HttpApiGroup.make("mutualSign")
  .add(
    HttpApiEndpoint.post("request", `${PATH}/request`, { error: [BadRequest, Forbidden, NotFound, Conflict],
      params: ActionParam,
      payload: Schema.Struct({ counterparty_did: DidWeb }),
      success: Schema.Struct({
        action_uuid: Schema.String,
        status: Schema.Literal("pending"),
        counterparty_did: Schema.String,
        payload_hash: Schema.String,
        initiator_signature: Schema.String,
        expires_at: Timestamp,
        requested_at: Timestamp
      })
    })
  )
  .middleware(Authenticated)
  .annotateMerge(OpenApi.annotations({ title: "Mutual signing", description: "Ask a counterparty, by its did:web, to co-sign an action." }))
{}

export class MutualSignPublicGroup extends HttpApiGroup.make("mutualSignPublic")
  .add(
    HttpApiEndpoint.get("pending", `${PATH}/pending`, { error: NotFound, params: ActionParam, success: PendingMutualSign }).middleware(PublicRoute),
    HttpApiEndpoint.post("complete", `${PATH}/complete`, { error: [BadRequest, Forbidden, NotFound, Gone],
      params: ActionParam,
      payload: Schema.Struct({ did: DidWeb, signature: Ed25519Signature, signed_payload_hash: Sha256Hash }),
      success: Schema.Struct({ action_uuid: Schema.String, status: Schema.Literal("completed"), combined_receipt_hash: Schema.String, sealed_at: Timestamp })
    }).middleware(PublicRoute),
    HttpApiEndpoint.get("receipt", `${PATH}/receipt`, { error: [BadRequest, NotFound], params: ActionParam, success: MutualSignReceipt }).middleware(PublicRoute),
    HttpApiEndpoint.post("reject", `${PATH}/reject`, { error: [BadRequest, NotFound],
      params: ActionParam,
      // The body is optional: no body, null or {} reject with reason "".
      payload: [Schema.Struct({ reason: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(2000)))) }), Schema.Null],
      success: Schema.Struct({ action_uuid: Schema.String, status: Schema.Literal("rejected"), reason: Schema.String })
    }).middleware(PublicRoute)
  )
  .annotateMerge(
    OpenApi.annotations({
      title: "Mutual signing (counterparty)",
      description: "The counterparty proves itself by its Ed25519 signature over the JCS payload, verified with the key of its DID document."
    })
  )
{}
