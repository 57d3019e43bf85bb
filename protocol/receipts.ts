/**
 * Receipts (CONTRACT.md "Actions and receipts"), and every public route that serves what a
 * verifier needs: `/api/v1/receipts/*` (the authenticated export), `/api/v1/verify/*`,
 * `/api/v1/tsa/certificate`, `/api/v1/.well-known/jwks.json` and `/.well-known/did.json`.
 * Key rotation is under `/api/v1/admin` (`protocol/admin.ts`).
 */

import * as Effect from "effect/Effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated, PublicRoute } from "./auth.js"
import { Ed25519Signature, Sha256Hash, Timestamp } from "./common.js"
import { DidDocument } from "./dids.js"
import { Forbidden, refusal } from "./errors.js"

export const PublicJwk = Schema.Struct({
  kty: Schema.Literal("OKP"),
  crv: Schema.Literal("Ed25519"),
  x: Schema.String.annotate({ description: "base64url of the 32 raw public key bytes" }),
  kid: Schema.String.annotate({ description: "the receipts' `public_key_id`" }),
  use: Schema.Literal("sig"),
  alg: Schema.Literal("EdDSA"),
  status: Schema.optionalKey(Schema.Literals(["active", "retired"]))
})

export const Jwks = Schema.Struct({ keys: Schema.Array(PublicJwk) })
export type Jwks = typeof Jwks.Type

const SignedPayload = Schema.Record(Schema.String, Schema.Unknown).annotate({
  description: "the signed payload; its RFC 8785 canonical form is what was hashed and signed"
})

export const ReceiptChecks = Schema.Struct({
  payload_hash: Schema.Boolean,
  signature: Schema.Boolean,
  timestamp_imprint: Schema.NullOr(Schema.Boolean).annotate({ description: "null when the receipt has no timestamp token" }),
  timestamp_signature: Schema.NullOr(Schema.Boolean).annotate({ description: "null when the receipt has no timestamp token" }),
  chain: Schema.NullOr(Schema.Boolean).annotate({
    description: "previous_payload_hash links to the previous receipt of the same (org, agent) chain; null for a case receipt, which is not chained"
  })
})
export type ReceiptChecks = typeof ReceiptChecks.Type

export const ReceiptVerification = Schema.Struct({
  valid: Schema.Boolean,
  receipt_uuid: Schema.String,
  action_uuid: Schema.NullOr(Schema.String).annotate({ description: "null for a case receipt (see case_id)" }),
  case_id: Schema.optionalKey(Schema.String).annotate({ description: "only for a case receipt" }),
  receipt_version: Schema.optionalKey(Schema.String).annotate({ description: "only for a case receipt" }),
  payload_hash: Sha256Hash,
  signature: Ed25519Signature,
  public_key_id: Schema.String,
  public_key: Schema.NullOr(PublicJwk),
  algorithm: Schema.Literal("Ed25519"),
  signed_payload: SignedPayload,
  timestamp_token: Schema.NullOr(Schema.String),
  checks: ReceiptChecks,
  verified_at: Timestamp
})
export type ReceiptVerification = typeof ReceiptVerification.Type

export const StoredReceipt = Schema.Struct({
  receipt_uuid: Schema.String,
  action_uuid: Schema.String,
  org_uuid: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  agent_sequence: Schema.Int,
  receipt_status: Schema.String,
  receipt_version: Schema.String,
  payload_hash: Sha256Hash,
  signature: Ed25519Signature,
  public_key_id: Schema.String,
  timestamp_token: Schema.NullOr(Schema.String),
  verify_url: Schema.String,
  created_at: Timestamp,
  signed_payload: SignedPayload
})
export type StoredReceipt = typeof StoredReceipt.Type

export const RotationResult = Schema.Struct({
  public_key_id: Schema.String,
  previous_public_key_id: Schema.NullOr(Schema.String),
  rotated_at: Timestamp
})
export type RotationResult = typeof RotationResult.Type

/*
 * The refusals of receipts and key rotation. Both 404s say NOT_FOUND with no details: their
 * messages, as literals, tell them apart, so the area error's reason union (which parses a reason
 * by its fields) keeps each one's class.
 */

const fixedMessage = <const Message extends string>(message: Message) =>
  Schema.Literal(message).pipe(Schema.withConstructorDefault(Effect.succeed(message)))

export class ReceiptNotFound extends Schema.Error<ReceiptNotFound>("ReceiptNotFound")(
  { ...refusal("NOT_FOUND"), message: fixedMessage("No receipt found") },
  { httpApiStatus: 404, description: "No receipt with this id (for the authenticated export: none of the caller's organization)" }
) {
  readonly _tag = "ReceiptNotFound"
}

export class ActionReceiptNotFound extends Schema.Error<ActionReceiptNotFound>("ActionReceiptNotFound")(
  { ...refusal("NOT_FOUND"), message: fixedMessage("No receipt for this action") },
  { httpApiStatus: 404, description: "The action is unknown or has no receipt yet" }
) {
  readonly _tag = "ActionReceiptNotFound"
}

/** Answered by `POST /api/v1/admin/signing-keys/rotate` (protocol/admin.ts). */
export class RotationInProgress extends Schema.Error<RotationInProgress>("RotationInProgress")(
  refusal("ROTATION_IN_PROGRESS", "Another rotation finished first; retry"),
  { httpApiStatus: 409, description: "A concurrent rotation won; retry" }
) {
  readonly _tag = "RotationInProgress"
}

export class ReceiptsPublicGroup extends HttpApiGroup.make("receiptsPublic")
  .add(
    HttpApiEndpoint.get("jwks", "/api/v1/.well-known/jwks.json", { success: Jwks }).middleware(PublicRoute),
    HttpApiEndpoint.get("didDocument", "/.well-known/did.json", { success: DidDocument }).middleware(PublicRoute),
    HttpApiEndpoint.get("tsaCertificate", "/api/v1/tsa/certificate", {
      query: { format: Schema.optionalKey(Schema.Literals(["pem", "der"])) },
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "application/pem-certificate-chain" }))
    }).middleware(PublicRoute),
    HttpApiEndpoint.get("verifyAction", "/api/v1/verify/action/:action_uuid", { error: ActionReceiptNotFound,
      params: { action_uuid: Schema.String },
      success: ReceiptVerification
    }).middleware(PublicRoute),
    HttpApiEndpoint.get("verifyReceipt", "/api/v1/verify/:receipt_uuid", { error: ReceiptNotFound,
      params: { receipt_uuid: Schema.String },
      success: ReceiptVerification
    }).middleware(PublicRoute)
  )
  .annotateMerge(
    OpenApi.annotations({
      title: "Receipt verification",
      description:
        "Public keys (JWKS, did:web document), the timestamp authority certificate, and verification of any receipt without credentials."
    })
  )
{}

export class ReceiptsGroup extends HttpApiGroup.make("receipts")
  .add(
    HttpApiEndpoint.get("get", "/api/v1/receipts/:receipt_uuid", { error: [Forbidden, ReceiptNotFound],
      params: { receipt_uuid: Schema.String },
      success: StoredReceipt
    })
  )
  .middleware(Authenticated)
  .annotateMerge(OpenApi.annotations({ title: "Receipts", description: "A receipt of the caller's organization, as stored (scope `receipts:read`)." }))
{}
