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
  verified_at: Timestamp,
  message: Schema.String.annotate({ description: '"receipt is valid", or "receipt is not valid: " and the failed checks' }),
  policy_evaluator_attestation: Schema.Null.annotate({ description: "always null: no separate policy evaluator signs" })
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

/**
 * A receipt exported for offline verification (CONTRACT-sdk-beyond §2), a superset of the
 * dashboard's download file. Nothing in it is signed anew.
 */
export const ReceiptExport = Schema.Struct({
  format: Schema.Literal("gateway-receipt/1"),
  export_version: Schema.Literal("1.0"),
  receipt_uuid: Schema.String,
  action_uuid: Schema.String,
  receipt: StoredReceipt.annotate({ description: "what GET /api/v1/receipts/{receipt_uuid} answers" }),
  signed_payload: SignedPayload,
  canonical_payload: Schema.String.annotate({ description: "the exact RFC 8785 text that was hashed, signed and timestamped" }),
  payload_hash: Sha256Hash,
  signature: Ed25519Signature,
  public_key_id: Schema.String,
  public_key: Schema.NullOr(PublicJwk).annotate({ description: "the signing key's JWK (kid = public_key_id), as the JWKS publishes it" }),
  timestamp_token: Schema.NullOr(Schema.String),
  tsa_certificate: Schema.NullOr(Schema.String).annotate({
    description: "PEM of the internal timestamp authority when it issued the token (for `openssl ts -verify -CAfile`), else null"
  }),
  previous: Schema.NullOr(
    Schema.Struct({ receipt_uuid: Schema.String, payload_hash: Sha256Hash, signed_payload: SignedPayload })
  ).annotate({ description: "the receipt at agent_sequence − 1 of the same chain; null at sequence 1" }),
  verify_url: Schema.String,
  jwks_url: Schema.String,
  platform_did: Schema.String,
  exported_at: Timestamp
})
export type ReceiptExport = typeof ReceiptExport.Type

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
    }),
    HttpApiEndpoint.get("export", "/api/v1/receipts/:receipt_uuid/export", { error: [Forbidden, ReceiptNotFound],
      params: { receipt_uuid: Schema.String },
      query: { format: Schema.optionalKey(Schema.Literals(["json", "pdf"])).annotate({ description: "json (default) or pdf" }) },
      success: [
        ReceiptExport,
        Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/pdf" })).annotate({
          description: "format=pdf: `receipt-{receipt_uuid}.pdf`, the same fields printed, dated by the receipt; ETag = sha256 of the bytes"
        })
      ]
    })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Receipts",
      description: "A receipt of the caller's organization, as stored, or exported for offline verification as JSON or PDF (scope `receipts:read`)."
    })
  )
{}
