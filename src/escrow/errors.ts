/** Why an escrow operation was refused (spec 001 "Escrow": codes per endpoint). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

export class AccountNotFound extends Schema.TaggedError<AccountNotFound>()("AccountNotFound", { account_uuid: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `Escrow account ${this.account_uuid} not found`
  readonly details = { account_uuid: this.account_uuid }
}

export class UnsupportedCurrency extends Schema.TaggedError<UnsupportedCurrency>()("UnsupportedCurrency", { currency: Schema.String }) {
  readonly code = "UNSUPPORTED_CURRENCY"
  override readonly message = `${this.currency} is not a supported ISO 4217 currency`
  readonly details = { currency: this.currency }
}

export class AgentNotFound extends Schema.TaggedError<AgentNotFound>()("AgentNotFound", { agent_id: Schema.String }) {
  readonly code = "AGENT_NOT_FOUND"
  override readonly message = `Agent ${this.agent_id} is not an agent of this organization`
  readonly details = { agent_id: this.agent_id }
}

export class AgentDecommissioned extends Schema.TaggedError<AgentDecommissioned>()("AgentDecommissioned", { agent_id: Schema.String }) {
  readonly code = "AGENT_DECOMMISSIONED"
  override readonly message = `Agent ${this.agent_id} is decommissioned`
  readonly details = { agent_id: this.agent_id }
}

export class InvalidAmount extends Schema.TaggedError<InvalidAmount>()("InvalidAmount", {
  amount: Schema.String,
  currency: Schema.String,
  problem: Schema.String
}) {
  readonly code = "INVALID_AMOUNT"
  override readonly message = `amount ${this.problem}`
  readonly details = { amount: this.amount, currency: this.currency }
}

export class AccountFrozen extends Schema.TaggedError<AccountFrozen>()("AccountFrozen", { account_uuid: Schema.String }) {
  readonly code = "ACCOUNT_FROZEN"
  override readonly message = "The account is frozen by an open dispute"
  readonly details = { account_uuid: this.account_uuid }
}

export class InsufficientBalance extends Schema.TaggedError<InsufficientBalance>()("InsufficientBalance", {
  account_uuid: Schema.String,
  balance: Schema.String,
  amount: Schema.String
}) {
  readonly code = "INSUFFICIENT_BALANCE"
  override readonly message = `The balance ${this.balance} is less than ${this.amount}`
  readonly details = { account_uuid: this.account_uuid, balance: this.balance, amount: this.amount }
}

export class InvalidSignature extends Schema.TaggedError<InvalidSignature>()("InvalidSignature", { account_uuid: Schema.String }) {
  readonly code = "INVALID_SIGNATURE"
  override readonly message =
    "signature is not the caller's signature of this dispute (see docs/decisions.md: hmac-sha256 of the JCS terms, keyed by the request's bearer credential)"
  readonly details = { account_uuid: this.account_uuid }
}

export class DisputeAlreadyOpen extends Schema.TaggedError<DisputeAlreadyOpen>()("DisputeAlreadyOpen", { account_uuid: Schema.String, dispute_id: Schema.String }) {
  readonly code = "DISPUTE_ALREADY_OPEN"
  override readonly message = "The account already has an open dispute"
  readonly details = { account_uuid: this.account_uuid, dispute_id: this.dispute_id }
}

export class EvidenceNotFound extends Schema.TaggedError<EvidenceNotFound>()("EvidenceNotFound", { evidence_package_uuid: Schema.String }) {
  readonly code = "EVIDENCE_NOT_FOUND"
  override readonly message = `Evidence package ${this.evidence_package_uuid} not found`
  readonly details = { evidence_package_uuid: this.evidence_package_uuid }
}

export class NoOpenDispute extends Schema.TaggedError<NoOpenDispute>()("NoOpenDispute", { account_uuid: Schema.String }) {
  readonly code = "NO_OPEN_DISPUTE"
  override readonly message = "The account has no open dispute to resolve"
  readonly details = { account_uuid: this.account_uuid }
}

export class EscrowError extends Schema.TaggedError<EscrowError>()("EscrowError", {
  reason: Schema.Union([
    AccountNotFound,
    UnsupportedCurrency,
    AgentNotFound,
    AgentDecommissioned,
    InvalidAmount,
    AccountFrozen,
    InsufficientBalance,
    InvalidSignature,
    DisputeAlreadyOpen,
    EvidenceNotFound,
    NoOpenDispute,
    InvalidInput
  ])
}) {}

export const refuse = (reason: EscrowError["reason"]) => Effect.fail(new EscrowError({ reason }))
