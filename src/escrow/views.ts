/**
 * Escrow records as the wire shows them: amounts as decimal strings with the account's digits, and
 * the keys the published SDKs read (CONTRACT-sdk-beyond §8).
 */
import type { EscrowAccount, EscrowAccountListItem, EscrowDispute, EscrowTransaction } from "../../protocol/escrow.js"
import { formatMinor } from "./money.js"
import type { AccountRow, DisputeRow, TransactionRow } from "./store.js"

export const accountListItem = (row: AccountRow): EscrowAccountListItem => ({
  account_uuid: row.account_uuid,
  id: row.account_uuid,
  currency: row.currency,
  purpose: row.purpose,
  agent_id: row.agent_id,
  balance: formatMinor(row.balance_minor, row.minor_digits),
  status: row.status,
  created_at: row.created_at
})

export const accountView = (row: AccountRow, transactionCount: number): EscrowAccount => ({
  ...accountListItem(row),
  counterparty_org_uuid: row.counterparty_org_uuid,
  counterparty: row.counterparty,
  transaction_count: transactionCount,
  updated_at: row.updated_at
})

export const transactionView = (row: TransactionRow, account: Pick<AccountRow, "currency" | "minor_digits">): EscrowTransaction => {
  const money = (minor: bigint) => formatMinor(minor, account.minor_digits)
  return {
    transaction_id: row.transaction_id,
    account_uuid: row.account_uuid,
    type: row.type,
    amount: money(row.amount_minor),
    currency: account.currency,
    fee: row.type === "release" ? money(row.fee_minor ?? 0n) : null,
    net_release: row.type === "release" ? money(row.net_minor ?? row.amount_minor) : null,
    balance_after: money(row.balance_after_minor),
    description: row.description,
    reference: row.reference,
    reference_action_uuid: row.reference_action_uuid,
    sequence: row.sequence,
    receipt: row.receipt,
    created_by: row.created_by,
    created_at: row.created_at,
    id: row.transaction_id,
    transaction_type: row.type,
    transaction_hash: row.receipt.payload_hash,
    signature: row.receipt.signature,
    status: "completed"
  }
}

export const disputeView = (row: DisputeRow, account: Pick<AccountRow, "currency" | "minor_digits">): EscrowDispute => ({
  dispute_id: row.dispute_id,
  account_uuid: row.account_uuid,
  amount: formatMinor(row.amount_minor, account.minor_digits),
  currency: account.currency,
  reason: row.reason,
  description: row.description,
  reference_action_uuid: row.reference_action_uuid,
  status: row.status,
  // An open dispute holds the account frozen; resolving it is what made it active again.
  account_status: row.status === "open" ? "frozen" : "active",
  evidence_package_uuid: row.evidence_package_uuid,
  receipt: row.receipt,
  opened_at: row.opened_at,
  opened_by: row.opened_by,
  resolution: row.resolution,
  resolution_note: row.resolution_note,
  resolved_at: row.resolved_at,
  resolved_by: row.resolved_by,
  resolution_receipt: row.resolution_receipt,
  id: row.dispute_id,
  transaction_type: "dispute",
  transaction_hash: row.receipt.payload_hash,
  signature: row.receipt.signature,
  created_at: row.opened_at
})
