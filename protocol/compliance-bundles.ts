/**
 * Compliance bundles (CONTRACT-sdk-beyond §4): a period's action receipts sealed inside the request
 * into an RFC 9162 tree of their own, the root timestamped (RFC 3161) and the bundle record signed
 * like a receipt; a streamed export that verifies offline, and inclusion proofs.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { PageQuery, Pagination, Timestamp } from "./common.js"
import { accessRefusal, Forbidden, InvalidInput, refusal } from "./errors.js"

export const BundleFrameworks = ["eu_ai_act_art12", "iso_42001", "aiuc_1", "soc_2_cc7", "raw"] as const
export type BundleFramework = (typeof BundleFrameworks)[number]

export const BUNDLE_VERSION = "1.0"
/** Agent ids one bundle may be narrowed to. */
export const MAX_BUNDLE_AGENTS = 100

const Text = (min: number, max: number) => Schema.String.check(Schema.isMinLength(min), Schema.isMaxLength(max))
const Hash = Schema.String.annotate({ description: "sha256:<hex>" })
const Count = Schema.Int

export const CreateBundleRequest = Schema.Struct({
  framework: Schema.Literals(BundleFrameworks),
  period_start: Text(1, 64).annotate({ description: "ISO 8601; without an offset UTC; a date alone is its first millisecond" }),
  period_end: Text(1, 64).annotate({ description: "ISO 8601; a date alone is its last millisecond; at most 366 days after period_start" }),
  title: Schema.optionalKey(Schema.NullOr(Text(1, 200))).annotate({ description: 'Default "{framework} {period_start}/{period_end}"' }),
  agent_filter: Schema.optionalKey(Schema.NullOr(Schema.Array(Text(1, 200)).check(Schema.isMinLength(1), Schema.isMaxLength(MAX_BUNDLE_AGENTS)))).annotate({
    description: "Agent ids whose receipts are sealed (duplicates dropped)"
  }),
  idempotency_key: Schema.optionalKey(Schema.NullOr(Text(1, 255))).annotate({ description: "Or the Idempotency-Key header; both and different → 422" })
})
export type CreateBundleRequest = typeof CreateBundleRequest.Type

/* framework_summary: the counts every framework has, then each framework's own (CONTRACT-sdk-beyond §4). */

export const ReceiptStatusCounts = Schema.Struct({ notarized: Count, failed: Count, denied: Count, denied_by_human: Count })

const Common = { receipt_count: Count, by_receipt_status: ReceiptStatusCounts, distinct_agents: Count }

export const Art12Summary = Schema.Struct({
  ...Common,
  article: Schema.Literal("12"),
  total_actions: Count,
  status_breakdown: Schema.Record(Schema.String, Count),
  distinct_models: Count,
  human_approvals: Count,
  timestamped_receipts: Count
})
export const Iso42001Summary = Schema.Struct({
  ...Common,
  standard: Schema.Literal("ISO/IEC 42001:2023"),
  controls: Schema.Array(Schema.String),
  distinct_agent_versions: Count,
  policy_denials: Count,
  human_reviews: Count,
  output_scan_flagged: Count
})
export const Aiuc1Summary = Schema.Struct({
  ...Common,
  standard: Schema.Literal("AIUC-1"),
  requirements: Schema.Array(Schema.String),
  reliability: Schema.Struct({ notarized: Count, failed: Count }),
  safety: Schema.Struct({ policy_denials: Count, human_denials: Count, output_scan_flagged: Count }),
  accountability: Schema.Struct({ timestamped_receipts: Count, human_approvals: Count, cosignatures: Count })
})
export const Soc2Cc7Summary = Schema.Struct({
  ...Common,
  criteria: Schema.Literal("CC7"),
  cc7_2_monitoring: Schema.Struct({ actions_monitored: Count, output_scanned: Count, drift_checks: Count, drift_alerts: Count }),
  cc7_3_evaluation: Schema.Struct({ policy_denials: Count, approvals_requested: Count, human_denials: Count, drift_alerts_acknowledged: Count }),
  cc7_4_response: Schema.NullOr(Schema.Struct({ dora_incidents_opened: Count, dora_incidents_resolved: Count })).annotate({
    description: "null when the organization's dora feature is off"
  })
})
export const RawSummary = Schema.Struct(Common)

/** Each member is told apart by its literal (`article`, `standard`, `criteria`); `raw` has none and comes last. */
export const FrameworkSummary = Schema.Union([Art12Summary, Iso42001Summary, Aiuc1Summary, Soc2Cc7Summary, RawSummary])
export type FrameworkSummary = typeof FrameworkSummary.Type

/** The signed record: its JCS bytes are hashed (`bundle_hash`) and signed (`signature`). */
export const BundleRecord = Schema.Struct({
  bundle_version: Schema.Literal(BUNDLE_VERSION),
  bundle_uuid: Schema.String,
  org_uuid: Schema.String,
  framework: Schema.Literals(BundleFrameworks),
  title: Schema.String,
  period_start: Timestamp,
  period_end: Timestamp,
  agent_filter: Schema.NullOr(Schema.Array(Schema.String)),
  receipt_count: Count,
  merkle_root: Hash,
  framework_summary: FrameworkSummary,
  timestamp_token: Schema.NullOr(Schema.String).annotate({ description: "RFC 3161 token (base64 DER) whose message imprint is the Merkle root" }),
  sealed_at: Timestamp
})
export type BundleRecord = typeof BundleRecord.Type

export const ComplianceBundle = Schema.Struct({
  ...BundleRecord.fields,
  id: Schema.String,
  status: Schema.Literal("sealed"),
  bundle_hash: Hash,
  signature: Schema.String,
  public_key_id: Schema.String,
  signing_key_id: Schema.String,
  created_at: Timestamp,
  created_by: Schema.String,
  idempotency_key: Schema.NullOr(Schema.String)
}).annotate({
  description:
    "bundle_hash = sha256 of the JCS (RFC 8785) of the record (the keys bundle_version … sealed_at); signature = Ed25519 over the same bytes by the receipt key public_key_id (JWKS); merkle_root = RFC 9162 root over the receipts' payload digests in (created_at, receipt_uuid) order (no receipt: SHA-256 of the empty string)"
})
export type ComplianceBundle = typeof ComplianceBundle.Type

export const BundleList = Schema.Struct({ bundles: Schema.Array(ComplianceBundle), data: Schema.Array(ComplianceBundle), pagination: Pagination })

export const BundleInclusionProof = Schema.Struct({
  bundle_uuid: Schema.String,
  receipt_uuid: Schema.String,
  payload_hash: Hash,
  leaf_hash: Hash.annotate({ description: "SHA-256(0x00 ‖ the 32 bytes of payload_hash)" }),
  index: Count,
  leaf_count: Count,
  siblings: Schema.Array(Hash).annotate({ description: "RFC 9162 §2.1.3.1 audit path, deepest first" }),
  merkle_root: Hash
})
export type BundleInclusionProof = typeof BundleInclusionProof.Type

/** One receipt of an export, in leaf order. */
export interface ExportedReceipt {
  readonly index: number
  readonly receipt_uuid: string
  readonly action_uuid: string
  readonly receipt_status: string
  readonly created_at: string
  readonly payload_hash: string
  /** The exact signed JCS text. */
  readonly signed_payload: string
  readonly signature: string
  readonly public_key_id: string
  readonly timestamp_token: string | null
}

/** The schema of a stream carries no description of its own: the endpoint says what the document holds. */
const EXPORT_DESCRIPTION =
    "One JSON document, streamed: {export_version, bundle_uuid, framework, title, period {start, end}, agent_filter, receipt_count, merkle_root, bundle (the signed record), bundle_hash, signature, public_key_id, timestamp_token, framework_summary, receipts [{index, receipt_uuid, action_uuid, receipt_status, created_at, payload_hash, signed_payload, signature, public_key_id, timestamp_token}] in leaf order, signing {algorithm, canonicalization, hash, merkle_tree, jwks_url, public_keys, platform_did, tsa_certificate}, verification (ordered steps), exported_at, request_id}"

/* The refusals of bundles. */

export class BundleNotFound extends Schema.Error<BundleNotFound>("BundleNotFound")(
  { ...refusal("NOT_FOUND", "Compliance bundle not found"), details: Schema.Struct({ bundle_uuid: Schema.String }) },
  { httpApiStatus: 404, description: "No such bundle in the caller's organization" }
) {
  readonly _tag = "BundleNotFound"
  static of(bundleUuid: string) {
    return new BundleNotFound({ details: { bundle_uuid: bundleUuid } })
  }
}

export class BundleReceiptNotFound extends Schema.Error<BundleReceiptNotFound>("BundleReceiptNotFound")(
  { ...refusal("NOT_FOUND", "The receipt is not in this bundle"), details: Schema.Struct({ bundle_uuid: Schema.String, receipt_uuid: Schema.String }) },
  { httpApiStatus: 404, description: "The receipt is not one of the bundle's leaves" }
) {
  readonly _tag = "BundleReceiptNotFound"
  static of(bundleUuid: string, receiptUuid: string) {
    return new BundleReceiptNotFound({ details: { bundle_uuid: bundleUuid, receipt_uuid: receiptUuid } })
  }
}

export class BundleTooLarge extends Schema.Error<BundleTooLarge>("BundleTooLarge")(
  { ...refusal("BUNDLE_TOO_LARGE"), details: Schema.Struct({ receipt_count: Schema.Int, max: Schema.Int }) },
  { httpApiStatus: 422, description: "The period holds more receipts than one bundle seals (COMPLIANCE_MAX_BUNDLE_RECEIPTS); nothing is stored" }
) {
  readonly _tag = "BundleTooLarge"
  static of(receiptCount: number, max: number) {
    return new BundleTooLarge({
      message: `The period holds ${receiptCount} receipts; one bundle seals at most ${max}: narrow the period or agent_filter`,
      details: { receipt_count: receiptCount, max }
    })
  }
}

export class DuplicateBundleRequest extends Schema.Error<DuplicateBundleRequest>("DuplicateBundleRequest")(
  { ...refusal("DUPLICATE_REQUEST"), details: Schema.Struct({ idempotency_key: Schema.String }) },
  { httpApiStatus: 409, description: "The idempotency key was used with another body, or its first request is still sealing" }
) {
  readonly _tag = "DuplicateBundleRequest"
  static of(idempotencyKey: string, why: "other_body" | "running") {
    const message = why === "other_body" ? "This idempotency key was used with a different request" : "A bundle with this idempotency key is still being sealed"
    return new DuplicateBundleRequest({ message, details: { idempotency_key: idempotencyKey } })
  }
}

export class BundleRateLimited extends Schema.Error<BundleRateLimited>("BundleRateLimited")(
  accessRefusal("RATE_LIMIT_EXCEEDED", "Compliance bundles are limited per minute per organization"),
  { httpApiStatus: 429, description: "Too many bundles created this minute for the organization" }
) {
  readonly _tag = "BundleRateLimited"
  static of(perMinute: number, retryAfterSeconds: number) {
    const message = `Compliance bundles are limited to ${perMinute} per minute per organization; retry in ${retryAfterSeconds} s`
    return new BundleRateLimited({ message, error: message })
  }
}

const PATH = "/api/v1/compliance/bundles"
const BundleParam = { bundle_uuid: Text(1, 64) }

export class ComplianceBundlesGroup extends HttpApiGroup.make("complianceBundles")
  .add(
    HttpApiEndpoint.post("create", PATH, {
      error: [Forbidden, InvalidInput, BundleTooLarge, DuplicateBundleRequest, BundleRateLimited],
      headers: { "idempotency-key": Schema.optionalKey(Schema.String).annotate({ description: "Same as the body's idempotency_key" }) },
      payload: CreateBundleRequest,
      // A replay of the same key and body answers the stored bundle with 200.
      success: [ComplianceBundle.pipe(HttpApiSchema.status(201)), ComplianceBundle.pipe(HttpApiSchema.status(200))]
    }),
    HttpApiEndpoint.get("list", PATH, {
      error: [Forbidden],
      query: { framework: Schema.optionalKey(Schema.Literals(BundleFrameworks)), ...PageQuery },
      success: BundleList
    }),
    HttpApiEndpoint.get("get", `${PATH}/:bundle_uuid`, { error: [Forbidden, BundleNotFound], params: BundleParam, success: ComplianceBundle }),
    HttpApiEndpoint.get("export", `${PATH}/:bundle_uuid/export`, {
      error: [Forbidden, BundleNotFound],
      params: BundleParam,
      success: HttpApiSchema.StreamUint8Array({ contentType: "application/json" })
    }).annotate(OpenApi.Description, EXPORT_DESCRIPTION),
    HttpApiEndpoint.get("inclusionProof", `${PATH}/:bundle_uuid/inclusion-proof/:receipt_uuid`, {
      error: [Forbidden, BundleNotFound, BundleReceiptNotFound],
      params: { ...BundleParam, receipt_uuid: Text(1, 64) },
      success: BundleInclusionProof
    })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Compliance bundles",
      description:
        "A period's receipts sealed into a signed, timestamped RFC 9162 tree of their own, for one framework (EU AI Act Art. 12, ISO/IEC 42001, AIUC-1, SOC 2 CC7, raw), with a streamed offline-verifiable export and inclusion proofs."
    })
  )
{}
