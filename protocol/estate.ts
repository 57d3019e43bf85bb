/**
 * Estate records (spec 001 "Estate (K)"): an agent's will, its death certificate with the
 * succession the will orders, and immutable compliance snapshots. CONTRACT.md: a death
 * certificate takes `reason` for `cause`; will `notify_emails` entries may be plain strings
 * (meaning `{type: "email", target}`). CONTRACT-sdk-beyond §8: a snapshot's `findings` may be the
 * published SDKs' map and `overall_status` may be absent (computed); new snapshots are signed.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { NullableTimestamp, PageQuery, Pagination, Timestamp } from "./common.js"
import { Forbidden, InvalidInput, refusal } from "./errors.js"
import { SNAPSHOT_SIGNED_KEYS } from "./verifier/sealed.js"

const Text = (min: number, max: number) => Schema.String.check(Schema.isMinLength(min), Schema.isMaxLength(max))

export const SUCCESSION_POLICIES = ["transfer_to_successor", "archive", "delete"] as const
export type SuccessionPolicy = (typeof SUCCESSION_POLICIES)[number]

export const NOTIFY_TYPES = ["email", "webhook", "slack"] as const
export const NotifyTarget = Schema.Struct({ type: Schema.Literals(NOTIFY_TYPES), target: Text(1, 2048) })
export type NotifyTarget = typeof NotifyTarget.Type

/** Longest retention a will may ask for: 20 years. */
export const MAX_RETENTION_DAYS = 7300

export const WillRequest = Schema.Struct({
  successor_slug: Schema.optionalKey(Schema.NullOr(Text(1, 64))),
  /** Checked by the service: an unknown policy is 400 INVALID_POLICY, not a 422. */
  succession_policy: Schema.String.annotate({ description: "transfer_to_successor, archive or delete" }),
  data_retention_days: Schema.optionalKey(Schema.NullOr(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: MAX_RETENTION_DAYS })))),
  /** Plain strings are e-mail addresses (the published SDK's form). */
  notify_emails: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.Union([Text(1, 2048), NotifyTarget])).check(Schema.isMaxLength(20)))),
  instructions: Schema.optionalKey(Schema.NullOr(Text(0, 10_000)))
})
export type WillRequest = typeof WillRequest.Type

export const Will = Schema.Struct({
  successor_slug: Schema.NullOr(Schema.String),
  succession_policy: Schema.Literals(SUCCESSION_POLICIES),
  data_retention_days: Schema.NullOr(Schema.Int),
  notify_emails: Schema.Array(NotifyTarget),
  instructions: Schema.NullOr(Schema.String),
  updated_at: Timestamp
})
export type Will = typeof Will.Type

export const WillAnswer = Schema.Struct({ agent_slug: Schema.String, will: Will })
export type WillAnswer = typeof WillAnswer.Type

export const DeathCertificateRequest = Schema.Struct({
  cause: Schema.optionalKey(Text(1, 200).annotate({ description: "e.g. replaced, deprecated, security_incident, end_of_life" })),
  /** The published SDK's name for `cause`, read when `cause` is absent. */
  reason: Schema.optionalKey(Text(1, 200)),
  notes: Schema.optionalKey(Schema.NullOr(Text(0, 10_000)))
})
export type DeathCertificateRequest = typeof DeathCertificateRequest.Type

export const DeathCertificate = Schema.Struct({
  certificate_id: Schema.String,
  cause: Schema.String,
  notes: Schema.NullOr(Schema.String),
  issued_at: Timestamp,
  issued_by: Schema.String
})

export const Succession = Schema.Struct({
  triggered: Schema.Boolean,
  successor_slug: Schema.NullOr(Schema.String),
  succession_policy: Schema.NullOr(Schema.Literals(SUCCESSION_POLICIES)),
  transfer_receipt_id: Schema.NullOr(Schema.String),
  /** `delete`: when the agent's data may be purged (issue time + data_retention_days), and when it was. */
  purge_after: NullableTimestamp,
  purged_at: NullableTimestamp
})
export type Succession = typeof Succession.Type

export const DeathCertificateAnswer = Schema.Struct({ agent_slug: Schema.String, death_certificate: DeathCertificate, succession: Succession })
export type DeathCertificateAnswer = typeof DeathCertificateAnswer.Type

export const FINDING_STATUSES = ["pass", "fail", "partial"] as const
export const OVERALL_STATUSES = ["compliant", "non_compliant", "partial"] as const

export const Finding = Schema.Struct({
  requirement: Text(1, 500),
  status: Schema.Literals(FINDING_STATUSES),
  evidence: Schema.optionalKey(Schema.NullOr(Text(0, 10_000)))
})
export type Finding = typeof Finding.Type

export const MAX_FINDINGS = 500

/** A finding of the published SDKs' map: its status, or `{status, evidence}`. */
export const MappedFinding = Schema.Union([
  Schema.Literals(FINDING_STATUSES),
  Schema.Struct({ status: Schema.Literals(FINDING_STATUSES), evidence: Schema.optionalKey(Schema.NullOr(Text(0, 10_000))) })
])
export type MappedFinding = typeof MappedFinding.Type

export const ComplianceSnapshotRequest = Schema.Struct({
  framework: Text(1, 64).annotate({ description: "e.g. eu_ai_act, sr_11_7, gdpr, iso_42001" }),
  agent_slug: Text(1, 64),
  /** Empty is 400 EMPTY_FINDINGS (the service checks it). */
  findings: Schema.Union([
    Schema.Array(Finding).check(Schema.isMaxLength(MAX_FINDINGS)),
    // Keys are requirements (1-500 characters, checked by the service: a schema key check would drop the key silently).
    Schema.Record(Schema.String, MappedFinding)
      .check(Schema.isMaxProperties(MAX_FINDINGS))
      .annotate({ description: "The published SDKs' form: `{requirement: status}` or `{requirement: {status, evidence}}`, taken in the order sent" })
  ]),
  /** Absent: computed from the findings (all pass → compliant, all fail → non_compliant, else partial). */
  overall_status: Schema.optionalKey(Schema.Literals(OVERALL_STATUSES)),
  notes: Schema.optionalKey(Schema.NullOr(Text(0, 10_000)))
})
export type ComplianceSnapshotRequest = typeof ComplianceSnapshotRequest.Type

export const ComplianceSnapshot = Schema.Struct({
  snapshot_uuid: Schema.String,
  framework: Schema.String,
  agent_slug: Schema.String,
  overall_status: Schema.Literals(OVERALL_STATUSES),
  findings: Schema.Array(
    Schema.Struct({ requirement: Schema.String, status: Schema.Literals(FINDING_STATUSES), evidence: Schema.NullOr(Schema.String) })
  ),
  notes: Schema.NullOr(Schema.String),
  finding_count: Schema.Int,
  pass_count: Schema.Int,
  fail_count: Schema.Int,
  partial_count: Schema.Int,
  created_at: Timestamp,
  created_by: Schema.String,
  // The published SDKs' keys (CONTRACT-sdk-beyond §8).
  id: Schema.String.annotate({ description: "= snapshot_uuid" }),
  status: Schema.Literals(OVERALL_STATUSES).annotate({ description: "= overall_status" }),
  snapshot_at: Timestamp.annotate({ description: "= created_at" }),
  agent_id: Schema.String.annotate({ description: "= agent_slug" }),
  // The seal, null on snapshots recorded before snapshots were signed.
  snapshot_hash: Schema.NullOr(Schema.String).annotate({
    description: `sha256 of the JCS of exactly ${SNAPSHOT_SIGNED_KEYS.join(", ")} (npm run verify checks it)`
  }),
  signature: Schema.NullOr(Schema.String).annotate({ description: "Ed25519 over the same bytes by the JWKS key public_key_id" }),
  public_key_id: Schema.NullOr(Schema.String),
  timestamp_token: Schema.NullOr(Schema.String).annotate({ description: "RFC 3161 token over the same digest" })
})
export type ComplianceSnapshot = typeof ComplianceSnapshot.Type

/* Refusals (spec 001 "Estate (K)" codes). */

export class EstateAgentNotFound extends Schema.Error<EstateAgentNotFound>("EstateAgentNotFound")(refusal("AGENT_NOT_FOUND"), {
  httpApiStatus: 404,
  description: "No such agent in the caller's organization"
}) {
  readonly _tag = "EstateAgentNotFound"
  static of(agent_slug: string) {
    return new EstateAgentNotFound({ message: `Agent ${agent_slug} not found`, details: { agent_slug } })
  }
}

export class SuccessorNotFound extends Schema.Error<SuccessorNotFound>("SuccessorNotFound")(refusal("SUCCESSOR_NOT_FOUND"), {
  httpApiStatus: 404,
  description: "The successor is not another agent of the organization"
}) {
  readonly _tag = "SuccessorNotFound"
  static of(successor_slug: string) {
    return new SuccessorNotFound({ message: `Successor ${successor_slug} is not another agent of this organization`, details: { successor_slug } })
  }
}

export class InvalidSuccessionPolicy extends Schema.Error<InvalidSuccessionPolicy>("InvalidSuccessionPolicy")(
  refusal("INVALID_POLICY", `succession_policy must be one of ${SUCCESSION_POLICIES.join(", ")}`),
  { httpApiStatus: 400, description: "succession_policy is not transfer_to_successor, archive or delete" }
) {
  readonly _tag = "InvalidSuccessionPolicy"
  static of(succession_policy: string) {
    return new InvalidSuccessionPolicy({ details: { succession_policy, allowed: [...SUCCESSION_POLICIES] } })
  }
}

export class WillNotFound extends Schema.Error<WillNotFound>("WillNotFound")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "The agent has no will"
}) {
  readonly _tag = "WillNotFound"
  static of(agent_slug: string) {
    return new WillNotFound({ message: `Agent ${agent_slug} has no will`, details: { agent_slug } })
  }
}

export class DeathCertificateNotFound extends Schema.Error<DeathCertificateNotFound>("DeathCertificateNotFound")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "The agent has no death certificate"
}) {
  readonly _tag = "DeathCertificateNotFound"
  static of(agent_slug: string) {
    return new DeathCertificateNotFound({ message: `Agent ${agent_slug} has no death certificate`, details: { agent_slug } })
  }
}

export class AlreadyDeceased extends Schema.Error<AlreadyDeceased>("AlreadyDeceased")(refusal("ALREADY_DECEASED"), {
  httpApiStatus: 409,
  description: "The agent has a death certificate already (its will no longer changes)"
}) {
  readonly _tag = "AlreadyDeceased"
  static of(agent_slug: string) {
    return new AlreadyDeceased({ message: `Agent ${agent_slug} already has a death certificate`, details: { agent_slug } })
  }
}

export class NotDecommissioned extends Schema.Error<NotDecommissioned>("NotDecommissioned")(refusal("NOT_DECOMMISSIONED"), {
  httpApiStatus: 422,
  description: "The agent must be decommissioned first"
}) {
  readonly _tag = "NotDecommissioned"
  static of(agent_slug: string) {
    return new NotDecommissioned({ message: `Agent ${agent_slug} must be decommissioned before a death certificate is issued`, details: { agent_slug } })
  }
}

export class EmptyFindings extends Schema.Error<EmptyFindings>("EmptyFindings")(refusal("EMPTY_FINDINGS", "findings must hold at least one finding"), {
  httpApiStatus: 400,
  description: "A snapshot without findings"
}) {
  readonly _tag = "EmptyFindings"
}

const SnapshotPage = Schema.Struct({ snapshots: Schema.Array(ComplianceSnapshot), data: Schema.Array(ComplianceSnapshot), pagination: Pagination })
export type SnapshotPage = typeof SnapshotPage.Type

const SlugParam = { agent_slug: Schema.String }

export class EstateGroup extends HttpApiGroup.make("estate")
  .add(
    HttpApiEndpoint.put("putWill", "/api/v1/estate/agents/:agent_slug/will", {
      error: [Forbidden, EstateAgentNotFound, InvalidSuccessionPolicy, SuccessorNotFound, AlreadyDeceased, InvalidInput],
      params: SlugParam,
      payload: WillRequest,
      success: WillAnswer
    }),
    HttpApiEndpoint.get("getWill", "/api/v1/estate/agents/:agent_slug/will", {
      error: [Forbidden, EstateAgentNotFound, WillNotFound],
      params: SlugParam,
      success: WillAnswer
    }),
    HttpApiEndpoint.post("issueDeathCertificate", "/api/v1/estate/agents/:agent_slug/death-certificate", {
      error: [Forbidden, EstateAgentNotFound, AlreadyDeceased, NotDecommissioned, SuccessorNotFound, InvalidInput],
      params: SlugParam,
      payload: DeathCertificateRequest,
      success: DeathCertificateAnswer.pipe(HttpApiSchema.status(201))
    }),
    HttpApiEndpoint.get("getDeathCertificate", "/api/v1/estate/agents/:agent_slug/death-certificate", {
      error: [Forbidden, EstateAgentNotFound, DeathCertificateNotFound],
      params: SlugParam,
      success: DeathCertificateAnswer
    }),
    HttpApiEndpoint.post("createSnapshot", "/api/v1/estate/compliance", {
      error: [Forbidden, EstateAgentNotFound, EmptyFindings, InvalidInput],
      payload: ComplianceSnapshotRequest,
      success: ComplianceSnapshot.pipe(HttpApiSchema.status(201))
    }),
    HttpApiEndpoint.get("listSnapshots", "/api/v1/estate/compliance", {
      error: [Forbidden, EstateAgentNotFound],
      query: { ...PageQuery, framework: Schema.optionalKey(Schema.String), agent_slug: Schema.optionalKey(Schema.String) },
      success: SnapshotPage
    })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Estate",
      description:
        "An agent's will, its death certificate (the agent must be decommissioned; the will's succession runs when it is issued) and immutable compliance snapshots."
    })
  )
{}
