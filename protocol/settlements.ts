/**
 * Settlements (spec 001 "Settlement"): each one appends the organization's
 * unsettled receipts to its one RFC 9162 Merkle log and signs the new tree head.
 * Beyond the spec: a C2SP signed-note checkpoint per settlement and consistency
 * proofs between any two settlements.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { PageQuery, Pagination, Timestamp } from "./common.js"
import { accessRefusal, Forbidden, InvalidInput, refusal } from "./errors.js"

const Hash = Schema.String.annotate({ description: "sha256:<hex>" })

export const Settlement = Schema.Struct({
  id: Schema.String,
  org_uuid: Schema.String,
  period_start: Timestamp,
  period_end: Timestamp,
  receipt_count: Schema.Int,
  merkle_root: Hash,
  settlement_hash: Hash,
  signature: Schema.String,
  signing_key_id: Schema.String,
  timestamp_token: Schema.NullOr(Schema.String),
  sealed_at: Timestamp
}).annotate({
  description:
    "merkle_root is the head of the organization's whole log after this settlement; settlement_hash is sha256 of the JCS of the other fields without signature, which signs the same bytes"
})
export type Settlement = typeof Settlement.Type

const SettlementSummary = Schema.Struct({
  id: Schema.String,
  period_start: Timestamp,
  period_end: Timestamp,
  receipt_count: Schema.Int,
  merkle_root: Hash,
  sealed_at: Timestamp
})

export const SettledReceipt = Schema.Struct({
  receipt_uuid: Schema.String,
  action_uuid: Schema.String,
  action_type: Schema.NullOr(Schema.String),
  agent_id: Schema.NullOr(Schema.String),
  payload_hash: Hash,
  created_at: Timestamp
})
export type SettledReceipt = typeof SettledReceipt.Type

export const InclusionProof = Schema.Struct({
  settlement_uuid: Schema.String,
  receipt_uuid: Schema.String,
  merkle_root: Hash,
  leaf_hash: Hash,
  index: Schema.Int,
  leaf_count: Schema.Int,
  siblings: Schema.Array(Hash)
})
export type InclusionProof = typeof InclusionProof.Type

const TreeHead = Schema.Struct({ settlement_uuid: Schema.String, tree_size: Schema.Int, merkle_root: Hash })

export const ConsistencyProof = Schema.Struct({ from: TreeHead, to: TreeHead, proof: Schema.Array(Hash) })
export type ConsistencyProof = typeof ConsistencyProof.Type

export const SettlementCheckpoint = Schema.Struct({
  settlement_uuid: Schema.String,
  origin: Schema.String,
  tree_size: Schema.Int,
  merkle_root: Hash,
  checkpoint: Schema.String.annotate({ description: "C2SP tlog-checkpoint signed note" }),
  verifier_key: Schema.String.annotate({ description: "C2SP signed-note verifier key of the signer" }),
  signing_key_id: Schema.String
})
export type SettlementCheckpoint = typeof SettlementCheckpoint.Type

/* The refusals of settlements. */

/*
 * Both 404s say NOT_FOUND: their `details` keys tell them apart, so the area error's reason union
 * (which parses a reason by its fields) keeps each one's class.
 */

export class SettlementNotFound extends Schema.Error<SettlementNotFound>("SettlementNotFound")(
  { ...refusal("NOT_FOUND", "Settlement not found"), details: Schema.Struct({ settlement_uuid: Schema.String }) },
  {
    httpApiStatus: 404,
    description: "No such settlement in the caller's organization"
  }
) {
  readonly _tag = "SettlementNotFound"
  static of(settlementUuid: string) {
    return new SettlementNotFound({ details: { settlement_uuid: settlementUuid } })
  }
}

export class ReceiptNotSettled extends Schema.Error<ReceiptNotSettled>("ReceiptNotSettled")(
  { ...refusal("NOT_FOUND", "No settled receipt with this id in this organization"), details: Schema.Struct({ receipt_uuid: Schema.String }) },
  { httpApiStatus: 404, description: "The receipt is not the caller's organization's, or no settlement has sealed it yet" }
) {
  readonly _tag = "ReceiptNotSettled"
  static of(receiptUuid: string) {
    return new ReceiptNotSettled({ details: { receipt_uuid: receiptUuid } })
  }
}

export class SettlementRateLimited extends Schema.Error<SettlementRateLimited>("SettlementRateLimited")(
  accessRefusal("RATE_LIMIT_EXCEEDED", "Settlements are limited per minute per organization"),
  { httpApiStatus: 429, description: "Too many settlements this minute for the organization" }
) {
  readonly _tag = "SettlementRateLimited"
  static of(perMinute: number, retryAfterSeconds: number) {
    const message = `Settlements are limited to ${perMinute} per minute per organization; retry in ${retryAfterSeconds} s`
    return new SettlementRateLimited({ message, error: message })
  }
}

const SettlementParam = { settlement_uuid: Schema.String.check(Schema.isMaxLength(64)) }
const ReceiptsQuery = {
  page: PageQuery.page,
  per_page: Schema.optionalKey(Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 1000 })))
}
const PATH = "/api/v1/settlements"

export class SettlementsGroup extends HttpApiGroup.make("settlements")
  .add(
    HttpApiEndpoint.post("create", PATH, {
      error: [Forbidden, SettlementRateLimited],
      success: [Settlement.pipe(HttpApiSchema.status(201)), Schema.Null]
    }),
    HttpApiEndpoint.get("list", PATH, {
      error: Forbidden,
      query: PageQuery,
      success: Schema.Struct({ data: Schema.Array(SettlementSummary), pagination: Pagination })
    }),
    HttpApiEndpoint.get("consistency", `${PATH}/consistency`, {
      error: [Forbidden, SettlementNotFound, InvalidInput],
      query: { from: Schema.String.check(Schema.isMaxLength(64)), to: Schema.String.check(Schema.isMaxLength(64)) },
      success: ConsistencyProof
    }),
    HttpApiEndpoint.get("inclusionProof", `${PATH}/inclusion-proof/:receipt_uuid`, {
      error: [Forbidden, ReceiptNotSettled],
      params: { receipt_uuid: Schema.String.check(Schema.isMaxLength(64)) },
      success: InclusionProof
    }),
    HttpApiEndpoint.get("get", `${PATH}/:settlement_uuid`, { error: [Forbidden, SettlementNotFound], params: SettlementParam, success: Settlement }),
    HttpApiEndpoint.get("receipts", `${PATH}/:settlement_uuid/receipts`, {
      error: [Forbidden, SettlementNotFound],
      params: SettlementParam,
      query: ReceiptsQuery,
      success: Schema.Array(SettledReceipt)
    }),
    HttpApiEndpoint.get("checkpoint", `${PATH}/:settlement_uuid/checkpoint`, { error: [Forbidden, SettlementNotFound], params: SettlementParam, success: SettlementCheckpoint })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Settlements",
      description: "Receipts sealed into one append-only RFC 9162 Merkle log per organization, with inclusion and consistency proofs."
    })
  )
{}
