/**
 * Evidence and discovery (spec 001 "Evidence and discovery"): sealed evidence packages of an
 * organization's actions, audited point-in-time (time travel) queries, and liability chains.
 * CONTRACT.md: time travel reads the query's fields from the top level when `query` is absent;
 * liability chain answers also carry `chain`.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { ActionStatuses } from "./actions.js"
import { Authenticated } from "./auth.js"
import { NullableTimestamp, PageQuery, Pagination, Timestamp } from "./common.js"
import { Forbidden, InvalidInput, refusal } from "./errors.js"
import { SEALED_PACKAGE_KEYS } from "./verifier/sealed.js"

/** Actions one package may name (docs/decisions.md). */
export const MAX_PACKAGE_ACTIONS = 1000
/** Actions one time-travel answer lists; `result_count` still counts every match. */
export const MAX_DISCOVERY_RESULTS = 1000
/** Entries of a liability chain, the action itself included. */
export const MAX_CHAIN_ENTRIES = 100

const Text = (max: number) => Schema.String.check(Schema.isMaxLength(max))
const Metadata = Schema.Record(Schema.String, Schema.Unknown)

export const CreatePackageRequest = Schema.Struct({
  // May be empty on the wire: an empty list is the spec's 400 EMPTY_ACTION_LIST, not a 422.
  action_uuids: Schema.Array(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100))).check(Schema.isMaxLength(MAX_PACKAGE_ACTIONS)),
  title: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
  purpose: Schema.optionalKey(Schema.NullOr(Text(2000))),
  /** The published SDKs' name for `purpose`, read when `purpose` is absent. */
  description: Schema.optionalKey(Schema.NullOr(Text(2000))),
  metadata: Schema.optionalKey(Schema.NullOr(Metadata)),
  agent_slugs: Schema.optionalKey(Schema.NullOr(Schema.Array(Text(200)).check(Schema.isMaxLength(MAX_PACKAGE_ACTIONS)))).annotate({
    description: "Sent by the published SDKs and ignored: a package's agent_slugs are its actions' agents"
  })
})
export type CreatePackageRequest = typeof CreatePackageRequest.Type

/** An action's receipt as it was signed: `signed_payload` holds the exact JCS bytes that were signed. */
export const PackageReceipt = Schema.Struct({
  receipt_uuid: Schema.String,
  receipt_version: Schema.String,
  receipt_status: Schema.String,
  payload_hash: Schema.String,
  signature: Schema.String,
  public_key_id: Schema.String,
  timestamp_token: Schema.NullOr(Schema.String),
  signed_payload: Schema.String,
  created_at: Timestamp
})

/** Where the action sits in its agent's receipt hash chain and in its parent chain. */
export const PackageChain = Schema.Struct({
  chain_agent_id: Schema.String,
  agent_sequence: Schema.NullOr(Schema.Number),
  previous_payload_hash: Schema.NullOr(Schema.String),
  previous_receipt_uuid: Schema.NullOr(Schema.String),
  parent_action_uuid: Schema.NullOr(Schema.String),
  parent_payload_hash: Schema.NullOr(Schema.String)
})

export const PackageAction = Schema.Struct({
  action_uuid: Schema.String,
  action_type: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  agent_version: Schema.NullOr(Schema.String),
  model_id: Schema.NullOr(Schema.String),
  model_version: Schema.NullOr(Schema.String),
  status: Schema.String,
  action_details_hash: Schema.String,
  instruction_hash: Schema.NullOr(Schema.String),
  outcome: Schema.NullOr(Schema.String),
  outcome_hash: Schema.NullOr(Schema.String),
  policy_uuid: Schema.NullOr(Schema.String),
  approved_by: Schema.NullOr(Schema.String),
  approved_at: NullableTimestamp,
  denial_reason: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  receipt: Schema.NullOr(PackageReceipt),
  chain: PackageChain
})
export type PackageAction = typeof PackageAction.Type

/** What is sealed: `package_hash` is sha256 of its JCS bytes, and `signature` signs the same bytes. */
export const SealedPackage = Schema.Struct({
  package_uuid: Schema.String,
  org_uuid: Schema.String,
  title: Schema.String,
  purpose: Schema.NullOr(Schema.String),
  status: Schema.Literal("sealed"),
  action_count: Schema.Number,
  actions: Schema.Array(PackageAction),
  metadata: Metadata,
  sealed_at: Timestamp,
  created_by: Schema.String
})
export type SealedPackage = typeof SealedPackage.Type

const Seal = {
  package_hash: Schema.String,
  signature: Schema.String,
  public_key_id: Schema.String
}

/** The published SDKs' keys (CONTRACT-sdk-beyond §8); outside the sealed document. */
const SdkKeys = {
  id: Schema.String.annotate({ description: "= package_uuid" }),
  action_uuids: Schema.Array(Schema.String).annotate({ description: "The package's actions, in package order" }),
  created_at: Timestamp.annotate({ description: "= sealed_at" }),
  description: Schema.NullOr(Schema.String).annotate({ description: "= purpose" }),
  agent_slugs: Schema.Array(Schema.String).annotate({ description: "Its actions' agent ids, sorted" })
}

export const EvidencePackage = Schema.Struct({ ...SealedPackage.fields, ...Seal, timestamp_token: Schema.NullOr(Schema.String), ...SdkKeys }).annotate({
  description: `The sealed package. To check it offline: keep exactly the sealed keys (${SEALED_PACKAGE_KEYS.join(", ")}), canonicalize them with JCS (RFC 8785); their sha256 is \`package_hash\`, \`signature\` is Ed25519 over those bytes by the JWKS key \`public_key_id\`, and \`timestamp_token\` is an RFC 3161 token over the same digest (\`npm run verify\` does all three).`
})
export type EvidencePackage = typeof EvidencePackage.Type

export const PackageSummary = Schema.Struct({
  package_uuid: Schema.String,
  title: Schema.String,
  purpose: Schema.NullOr(Schema.String),
  status: Schema.Literal("sealed"),
  action_count: Schema.Number,
  ...Seal,
  sealed_at: Timestamp,
  created_by: Schema.String,
  ...SdkKeys
})
export type PackageSummary = typeof PackageSummary.Type

const QueryFields = {
  agent_id: Schema.optionalKey(Schema.NullOr(Text(200))),
  action_type: Schema.optionalKey(Schema.NullOr(Text(200))),
  date_from: Schema.optionalKey(Schema.NullOr(Text(64))),
  date_to: Schema.optionalKey(Schema.NullOr(Text(64))),
  status: Schema.optionalKey(Schema.NullOr(Schema.Literals(ActionStatuses)))
}
export const DiscoveryQueryFields = Schema.Struct(QueryFields)
export type DiscoveryQueryFields = typeof DiscoveryQueryFields.Type

export const TimeTravelRequest = Schema.Struct({
  query: Schema.optionalKey(Schema.NullOr(DiscoveryQueryFields)),
  point_in_time: Text(64).annotate({ description: "ISO 8601 timestamp, not in the future" }),
  // Optional on the wire: a missing or blank reason is the spec's 400 MISSING_REASON.
  reason: Schema.optionalKey(Schema.NullOr(Text(2000))),
  // The published SDK sends the query's fields at the top level.
  ...QueryFields,
  /** The published SDKs' name for `agent_id`, read when neither `query` nor `agent_id` is given. */
  agent_slug: Schema.optionalKey(Schema.NullOr(Text(200)))
})
export type TimeTravelRequest = typeof TimeTravelRequest.Type

export const DiscoveryResult = Schema.Struct({
  action_uuid: Schema.String,
  action_type: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  model_id: Schema.NullOr(Schema.String),
  status: Schema.String.annotate({ description: "the action's status as of point_in_time" }),
  status_since: Timestamp,
  receipt_uuid: Schema.NullOr(Schema.String).annotate({ description: "the receipt, when it was minted by point_in_time" }),
  created_at: Timestamp
})
export type DiscoveryResult = typeof DiscoveryResult.Type

export const DiscoveryRecord = Schema.Struct({
  discovery_query_uuid: Schema.String,
  point_in_time: Timestamp,
  reason: Schema.String,
  query: Schema.Struct({
    agent_id: Schema.NullOr(Schema.String),
    action_type: Schema.NullOr(Schema.String),
    date_from: NullableTimestamp,
    date_to: NullableTimestamp,
    status: Schema.NullOr(Schema.String)
  }),
  results: Schema.Array(DiscoveryResult),
  result_count: Schema.Number,
  results_truncated: Schema.Boolean,
  results_hash: Schema.String,
  queried_at: Timestamp,
  queried_by: Schema.String
})
export type DiscoveryRecord = typeof DiscoveryRecord.Type

export const LiabilityHop = Schema.Struct({
  hop: Schema.Number,
  action_uuid: Schema.String,
  action_type: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  model_id: Schema.NullOr(Schema.String),
  status: Schema.String,
  authorized_by: Schema.NullOr(Schema.String),
  parent_action_uuid: Schema.NullOr(Schema.String),
  created_at: Timestamp
})
export type LiabilityHop = typeof LiabilityHop.Type

export const LiabilityChain = Schema.Struct({
  action_uuid: Schema.String,
  liability_chain: Schema.Array(LiabilityHop),
  chain: Schema.Array(LiabilityHop),
  total_hops: Schema.Number,
  root_action_id: Schema.String,
  truncated: Schema.Boolean
})
export type LiabilityChain = typeof LiabilityChain.Type

/* The refusals of evidence and discovery (spec 001 "Evidence and discovery"). */

export class EmptyActionList extends Schema.Error<EmptyActionList>("EmptyActionList")(
  refusal("EMPTY_ACTION_LIST", "action_uuids must name at least one action"),
  { httpApiStatus: 400, description: "action_uuids is empty" }
) {
  readonly _tag = "EmptyActionList"
}

/** Uuids that exist in no organization. */
export class PackageActionsNotFound extends Schema.Error<PackageActionsNotFound>("PackageActionsNotFound")(
  // Its details' key tells it from ChainActionNotFound (same code) in the area error's reason union.
  { ...refusal("ACTION_NOT_FOUND"), details: Schema.Struct({ action_uuids: Schema.Array(Schema.String) }) },
  { httpApiStatus: 404, description: "Some action_uuids name no action (listed in details)" }
) {
  readonly _tag = "PackageActionsNotFound"
  static of(actionUuids: ReadonlyArray<string>) {
    const message = actionUuids.length === 1 ? `Action ${actionUuids[0]} not found` : `${actionUuids.length} actions not found`
    return new PackageActionsNotFound({ message, details: { action_uuids: actionUuids } })
  }
}

/** Uuids of actions that belong to another organization: named back, nothing about them told. */
export class CrossOrgActions extends Schema.Error<CrossOrgActions>("CrossOrgActions")(
  refusal("CROSS_ORG_ACTIONS", "A package may only hold actions of the caller's organization"),
  { httpApiStatus: 422, description: "Some action_uuids are another organization's (listed in details)" }
) {
  readonly _tag = "CrossOrgActions"
  static of(actionUuids: ReadonlyArray<string>) {
    return new CrossOrgActions({ details: { action_uuids: actionUuids } })
  }
}

export class PackageNotFound extends Schema.Error<PackageNotFound>("PackageNotFound")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "No such evidence package in the caller's organization"
}) {
  readonly _tag = "PackageNotFound"
  static of(packageUuid: string) {
    return new PackageNotFound({ message: `Evidence package ${packageUuid} not found`, details: { package_uuid: packageUuid } })
  }
}

/** The liability chain's starting action: unknown or another organization's (404 either way). */
export class ChainActionNotFound extends Schema.Error<ChainActionNotFound>("ChainActionNotFound")(
  { ...refusal("ACTION_NOT_FOUND"), details: Schema.Struct({ action_uuid: Schema.String }) },
  { httpApiStatus: 404, description: "No such action in the caller's organization" }
) {
  readonly _tag = "ChainActionNotFound"
  static of(actionUuid: string) {
    return new ChainActionNotFound({ message: `Action ${actionUuid} not found`, details: { action_uuid: actionUuid } })
  }
}

export class MissingReason extends Schema.Error<MissingReason>("MissingReason")(refusal("MISSING_REASON", "A discovery query needs a reason"), {
  httpApiStatus: 400,
  description: "reason is missing or blank"
}) {
  readonly _tag = "MissingReason"
}

export class FutureTimestamp extends Schema.Error<FutureTimestamp>("FutureTimestamp")(refusal("FUTURE_TIMESTAMP", "point_in_time is in the future"), {
  httpApiStatus: 400,
  description: "point_in_time is later than now"
}) {
  readonly _tag = "FutureTimestamp"
  static of(pointInTime: string) {
    return new FutureTimestamp({ details: { point_in_time: pointInTime } })
  }
}

const PackagePage = Schema.Struct({ packages: Schema.Array(PackageSummary), data: Schema.Array(PackageSummary), pagination: Pagination })

export class EvidenceGroup extends HttpApiGroup.make("evidence")
  .add(
    HttpApiEndpoint.post("createPackage", "/api/v1/evidence/packages", {
      error: [Forbidden, EmptyActionList, PackageActionsNotFound, CrossOrgActions, InvalidInput],
      payload: CreatePackageRequest,
      success: PackageSummary.pipe(HttpApiSchema.status(201))
    }),
    HttpApiEndpoint.get("listPackages", "/api/v1/evidence/packages", { error: Forbidden, query: PageQuery, success: PackagePage }),
    HttpApiEndpoint.get("getPackage", "/api/v1/evidence/packages/:package_uuid", {
      error: [Forbidden, PackageNotFound],
      params: { package_uuid: Schema.String },
      success: EvidencePackage
    }),
    HttpApiEndpoint.post("timeTravel", "/api/v1/evidence/time-travel", {
      error: [Forbidden, MissingReason, FutureTimestamp, InvalidInput],
      payload: TimeTravelRequest,
      success: DiscoveryRecord
    }),
    HttpApiEndpoint.get("liabilityChain", "/api/v1/evidence/liability-chain/:action_uuid", {
      error: [Forbidden, ChainActionNotFound],
      params: { action_uuid: Schema.String },
      success: LiabilityChain
    })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Evidence and discovery",
      description:
        "Sealed, signed packages of the organization's actions with their receipts; audited point-in-time queries answered from the actions' status history; liability chains along parent actions."
    })
  )
{}
