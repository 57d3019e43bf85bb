/**
 * Escrow accounts (spec 001 "Escrow"): liability-commitment ledgers, no real funds held. Amounts
 * travel as decimal strings with exactly the currency's ISO 4217 minor digits; a JSON number is
 * read through its shortest decimal text (CONTRACT.md). Every transaction and dispute carries a
 * receipt signed by the platform key (verifiable with the JWKS).
 */

import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { NullableTimestamp, PageQuery, Pagination, Timestamp } from "./common.js"
import { Forbidden, InvalidInput, refusal } from "./errors.js"

const Text = (max: number) => Schema.String.check(Schema.isMaxLength(max))

/** Checked by the service (400 INVALID_AMOUNT, not 422), so the wire takes any short text or number. */
export const AmountInput = Schema.Union([Schema.String.check(Schema.isMaxLength(100)), Schema.Finite]).annotate({
  description: "A positive decimal string (e.g. \"100.50\") with at most the currency's minor digits; a JSON number is read through its shortest decimal text",
  examples: ["100.50"]
})

const Money = Schema.String.annotate({ description: "Decimal string with exactly the currency's ISO 4217 minor digits", examples: ["100.50"] })

export const Counterparty = Schema.Struct({
  name: Schema.optionalKey(Schema.NullOr(Text(200))),
  identifier: Schema.optionalKey(Schema.NullOr(Text(200))),
  type: Schema.optionalKey(Schema.NullOr(Schema.Literals(["individual", "organization"])))
})

export const CreateAccountRequest = Schema.Struct({
  purpose: Schema.optionalKey(Schema.NullOr(Text(2000))),
  currency: Schema.optionalKey(Schema.NullOr(Text(16).annotate({ description: "ISO 4217 code; default EUR" }))),
  agent_id: Schema.optionalKey(Schema.NullOr(Text(200).annotate({ description: "An agent slug of the caller's organization" }))),
  counterparty_org_uuid: Schema.optionalKey(Schema.NullOr(Text(200))),
  counterparty: Schema.optionalKey(Schema.NullOr(Counterparty))
})
export type CreateAccountRequest = typeof CreateAccountRequest.Type

export const MovementRequest = Schema.Struct({
  amount: AmountInput,
  description: Schema.optionalKey(Schema.NullOr(Text(2000))),
  reference: Schema.optionalKey(Schema.NullOr(Text(500))),
  reference_action_uuid: Schema.optionalKey(Schema.NullOr(Text(200))),
  /** Accepted from the published SDK and not checked: the spec names no signature error here. */
  signature: Schema.optionalKey(Schema.NullOr(Text(500)))
})
export type MovementRequest = typeof MovementRequest.Type

export const DisputeRequest = Schema.Struct({
  amount: AmountInput,
  /** `description` or `reason` (the SDK's name); one is required. */
  description: Schema.optionalKey(Schema.NullOr(Text(5000))),
  reason: Schema.optionalKey(Schema.NullOr(Text(5000))),
  reference_action_uuid: Schema.optionalKey(Schema.NullOr(Text(200))),
  evidence_package_uuid: Schema.optionalKey(Schema.NullOr(Text(200))),
  signature: Schema.optionalKey(Schema.NullOr(Text(500)).annotate({
    description:
      "Optional. `hmac-sha256:` + hex HMAC-SHA256 of the JCS of {account_uuid, amount, reason, evidence_package_uuid}, keyed by the bearer credential of this request"
  }))
})
export type DisputeRequest = typeof DisputeRequest.Type

export const DisputeResolutions = ["upheld", "dismissed", "settled", "withdrawn"] as const

export const ResolveDisputeRequest = Schema.Struct({
  resolution: Schema.Literals(DisputeResolutions),
  note: Schema.optionalKey(Schema.NullOr(Text(5000)))
})
export type ResolveDisputeRequest = typeof ResolveDisputeRequest.Type

export const EscrowReceipt = Schema.Struct({
  receipt_uuid: Schema.String,
  payload_hash: Schema.String,
  signature: Schema.String,
  public_key_id: Schema.String,
  timestamp: Timestamp,
  receipt_version: Schema.String,
  /** The exact RFC 8785 JSON that was signed, for offline verification. */
  signed_payload: Schema.String,
  timestamp_token: Schema.NullOr(Schema.String)
})
export type EscrowReceipt = typeof EscrowReceipt.Type

const AccountStatus = Schema.Literals(["active", "frozen"])

export const EscrowTransaction = Schema.Struct({
  transaction_id: Schema.String,
  account_uuid: Schema.String,
  type: Schema.Literals(["deposit", "release"]),
  amount: Money,
  currency: Schema.String,
  /** Releases: `fee + net_release = amount`; null on deposits. */
  fee: Schema.NullOr(Money),
  net_release: Schema.NullOr(Money),
  balance_after: Money,
  description: Schema.NullOr(Schema.String),
  reference: Schema.NullOr(Schema.String),
  reference_action_uuid: Schema.NullOr(Schema.String),
  sequence: Schema.Int,
  receipt: EscrowReceipt,
  created_by: Schema.String,
  created_at: Timestamp,
  // The published SDKs' keys (CONTRACT-sdk-beyond §8).
  id: Schema.String.annotate({ description: "= transaction_id" }),
  transaction_type: Schema.Literals(["deposit", "release"]).annotate({ description: "= type" }),
  transaction_hash: Schema.String.annotate({ description: "= receipt.payload_hash" }),
  signature: Schema.String.annotate({ description: "= receipt.signature" }),
  status: Schema.Literal("completed")
})
export type EscrowTransaction = typeof EscrowTransaction.Type

export const EscrowDispute = Schema.Struct({
  dispute_id: Schema.String,
  account_uuid: Schema.String,
  amount: Money,
  currency: Schema.String,
  reason: Schema.String,
  description: Schema.NullOr(Schema.String),
  reference_action_uuid: Schema.NullOr(Schema.String),
  status: Schema.Literals(["open", "resolved"]),
  account_status: AccountStatus,
  evidence_package_uuid: Schema.NullOr(Schema.String),
  receipt: EscrowReceipt,
  opened_at: Timestamp,
  opened_by: Schema.String,
  resolution: Schema.NullOr(Schema.Literals(DisputeResolutions)),
  resolution_note: Schema.NullOr(Schema.String),
  resolved_at: NullableTimestamp,
  resolved_by: Schema.NullOr(Schema.String),
  resolution_receipt: Schema.NullOr(EscrowReceipt),
  // The published SDKs' keys (they read a dispute as a transaction).
  id: Schema.String.annotate({ description: "= dispute_id" }),
  transaction_type: Schema.Literal("dispute"),
  transaction_hash: Schema.String.annotate({ description: "= receipt.payload_hash (the opening receipt)" }),
  signature: Schema.String.annotate({ description: "= receipt.signature (the opening receipt)" }),
  created_at: Timestamp.annotate({ description: "= opened_at" })
})
export type EscrowDispute = typeof EscrowDispute.Type

export const EscrowAccountListItem = Schema.Struct({
  account_uuid: Schema.String,
  /** = account_uuid (the published SDKs' key). */
  id: Schema.String,
  currency: Schema.String,
  purpose: Schema.NullOr(Schema.String),
  agent_id: Schema.NullOr(Schema.String),
  balance: Money,
  status: AccountStatus,
  created_at: Timestamp
})
export type EscrowAccountListItem = typeof EscrowAccountListItem.Type

export const EscrowAccount = Schema.Struct({
  ...EscrowAccountListItem.fields,
  counterparty_org_uuid: Schema.NullOr(Schema.String),
  counterparty: Schema.NullOr(Counterparty),
  transaction_count: Schema.Int,
  updated_at: Timestamp
})
export type EscrowAccount = typeof EscrowAccount.Type

export const EscrowAccountView = Schema.Struct({
  ...EscrowAccount.fields,
  /** The newest 100, newest first; all of them page by page at `.../transactions`. */
  transactions: Schema.Array(EscrowTransaction),
  disputes: Schema.Array(EscrowDispute)
})
export type EscrowAccountView = typeof EscrowAccountView.Type

/* The refusals of escrow (spec 001 "Escrow": codes per endpoint). */

export class EscrowAccountNotFound extends Schema.Error<EscrowAccountNotFound>("EscrowAccountNotFound")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "No such escrow account in the caller's organization"
}) {
  readonly _tag = "EscrowAccountNotFound"
  static of(accountUuid: string) {
    return new EscrowAccountNotFound({ message: `Escrow account ${accountUuid} not found`, details: { account_uuid: accountUuid } })
  }
}

export class UnsupportedCurrency extends Schema.Error<UnsupportedCurrency>("UnsupportedCurrency")(refusal("UNSUPPORTED_CURRENCY"), {
  httpApiStatus: 400,
  description: "currency is not a supported ISO 4217 code"
}) {
  readonly _tag = "UnsupportedCurrency"
  static of(currency: string) {
    return new UnsupportedCurrency({ message: `${currency} is not a supported ISO 4217 currency`, details: { currency } })
  }
}

export class EscrowAgentNotFound extends Schema.Error<EscrowAgentNotFound>("EscrowAgentNotFound")(refusal("AGENT_NOT_FOUND"), {
  httpApiStatus: 404,
  description: "agent_id is not an agent of the caller's organization"
}) {
  readonly _tag = "EscrowAgentNotFound"
  static of(agentId: string) {
    return new EscrowAgentNotFound({ message: `Agent ${agentId} is not an agent of this organization`, details: { agent_id: agentId } })
  }
}

export class EscrowAgentDecommissioned extends Schema.Error<EscrowAgentDecommissioned>("EscrowAgentDecommissioned")(refusal("AGENT_DECOMMISSIONED"), {
  httpApiStatus: 422,
  description: "agent_id names a decommissioned agent"
}) {
  readonly _tag = "EscrowAgentDecommissioned"
  static of(agentId: string) {
    return new EscrowAgentDecommissioned({ message: `Agent ${agentId} is decommissioned`, details: { agent_id: agentId } })
  }
}

export class InvalidAmount extends Schema.Error<InvalidAmount>("InvalidAmount")(refusal("INVALID_AMOUNT"), {
  httpApiStatus: 400,
  description: "amount is not a positive decimal with at most the currency's minor digits, is too large, or would take the balance too high"
}) {
  readonly _tag = "InvalidAmount"
  /** `problem` completes the sentence "amount …". */
  static of(amount: string, currency: string, problem: string) {
    return new InvalidAmount({ message: `amount ${problem}`, details: { amount, currency } })
  }
}

export class AccountFrozen extends Schema.Error<AccountFrozen>("AccountFrozen")(refusal("ACCOUNT_FROZEN", "The account is frozen by an open dispute"), {
  httpApiStatus: 409,
  description: "An open dispute freezes the account"
}) {
  readonly _tag = "AccountFrozen"
  static of(accountUuid: string) {
    return new AccountFrozen({ details: { account_uuid: accountUuid } })
  }
}

export class InsufficientBalance extends Schema.Error<InsufficientBalance>("InsufficientBalance")(refusal("INSUFFICIENT_BALANCE"), {
  httpApiStatus: 400,
  description: "The release is larger than the balance"
}) {
  readonly _tag = "InsufficientBalance"
  /** `balance` and `amount` as decimal strings of the account's currency. */
  static of(accountUuid: string, balance: string, amount: string) {
    return new InsufficientBalance({ message: `The balance ${balance} is less than ${amount}`, details: { account_uuid: accountUuid, balance, amount } })
  }
}

export class DisputeSignatureInvalid extends Schema.Error<DisputeSignatureInvalid>("DisputeSignatureInvalid")(
  refusal(
    "INVALID_SIGNATURE",
    "signature is not the caller's signature of this dispute (see docs/decisions.md: hmac-sha256 of the JCS terms, keyed by the request's bearer credential)"
  ),
  { httpApiStatus: 400, description: "signature is not the caller's signature of the dispute's terms" }
) {
  readonly _tag = "DisputeSignatureInvalid"
  static of(accountUuid: string) {
    return new DisputeSignatureInvalid({ details: { account_uuid: accountUuid } })
  }
}

export class DisputeAlreadyOpen extends Schema.Error<DisputeAlreadyOpen>("DisputeAlreadyOpen")(
  refusal("DISPUTE_ALREADY_OPEN", "The account already has an open dispute"),
  { httpApiStatus: 409, description: "The account already has an open dispute (named in details)" }
) {
  readonly _tag = "DisputeAlreadyOpen"
  static of(accountUuid: string, disputeId: string) {
    return new DisputeAlreadyOpen({ details: { account_uuid: accountUuid, dispute_id: disputeId } })
  }
}

export class DisputeEvidenceNotFound extends Schema.Error<DisputeEvidenceNotFound>("DisputeEvidenceNotFound")(refusal("EVIDENCE_NOT_FOUND"), {
  httpApiStatus: 404,
  description: "evidence_package_uuid names no evidence package of the caller's organization"
}) {
  readonly _tag = "DisputeEvidenceNotFound"
  static of(evidencePackageUuid: string) {
    return new DisputeEvidenceNotFound({
      message: `Evidence package ${evidencePackageUuid} not found`,
      details: { evidence_package_uuid: evidencePackageUuid }
    })
  }
}

export class NoOpenDispute extends Schema.Error<NoOpenDispute>("NoOpenDispute")(refusal("NO_OPEN_DISPUTE", "The account has no open dispute to resolve"), {
  httpApiStatus: 409,
  description: "The account has no open dispute"
}) {
  readonly _tag = "NoOpenDispute"
  static of(accountUuid: string) {
    return new NoOpenDispute({ details: { account_uuid: accountUuid } })
  }
}

const AccountParam = { account_uuid: Schema.String }
const PATH = "/api/v1/escrow/accounts"
const AccountPage = Schema.Struct({ accounts: Schema.Array(EscrowAccountListItem), data: Schema.Array(EscrowAccountListItem), pagination: Pagination })
const TransactionPage = Schema.Struct({ transactions: Schema.Array(EscrowTransaction), data: Schema.Array(EscrowTransaction), pagination: Pagination })

export class EscrowGroup extends HttpApiGroup.make("escrow")
  .add(
    HttpApiEndpoint.post("create", PATH, { error: [Forbidden, UnsupportedCurrency, EscrowAgentNotFound, EscrowAgentDecommissioned],
      payload: CreateAccountRequest,
      success: EscrowAccount.pipe(HttpApiSchema.status(201))
    }),
    HttpApiEndpoint.get("list", PATH, { error: Forbidden, query: PageQuery, success: AccountPage }),
    HttpApiEndpoint.get("get", `${PATH}/:account_uuid`, { error: [Forbidden, EscrowAccountNotFound], params: AccountParam, success: EscrowAccountView }),
    HttpApiEndpoint.get("transactions", `${PATH}/:account_uuid/transactions`, { error: [Forbidden, EscrowAccountNotFound], params: AccountParam, query: PageQuery, success: TransactionPage }),
    HttpApiEndpoint.post("deposit", `${PATH}/:account_uuid/deposit`, { error: [Forbidden, EscrowAccountNotFound, InvalidAmount, AccountFrozen],
      params: AccountParam,
      payload: MovementRequest,
      success: EscrowTransaction.pipe(HttpApiSchema.status(201))
    }),
    HttpApiEndpoint.post("release", `${PATH}/:account_uuid/release`, { error: [Forbidden, EscrowAccountNotFound, InvalidAmount, AccountFrozen, InsufficientBalance],
      params: AccountParam,
      payload: MovementRequest,
      success: EscrowTransaction
    }),
    HttpApiEndpoint.post("dispute", `${PATH}/:account_uuid/dispute`, {
      error: [Forbidden, EscrowAccountNotFound, InvalidAmount, DisputeSignatureInvalid, DisputeAlreadyOpen, DisputeEvidenceNotFound, InvalidInput],
      params: AccountParam,
      payload: DisputeRequest,
      success: EscrowDispute
    }),
    HttpApiEndpoint.post("resolveDispute", `${PATH}/:account_uuid/dispute/resolve`, { error: [Forbidden, EscrowAccountNotFound, NoOpenDispute],
      params: AccountParam,
      payload: ResolveDisputeRequest,
      success: EscrowDispute
    })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Escrow",
      description:
        "Liability-commitment ledgers (no real funds are held). Deposits and releases are serialized per account, so a balance never goes negative; a release's fee follows ESCROW_FEE_BASIS_POINTS. A dispute freezes the account until an owner or admin resolves it."
    })
  )
{}
