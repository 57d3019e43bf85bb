/**
 * Escrow ledgers. Amounts are BIGINT minor units of the account's currency (its digits stored
 * with it, so a later change of the currency table never rereads old rows). The account row is
 * the per-account lock: every movement and dispute locks it, checks, signs and writes in one
 * transaction, and keeps the account's receipt chain head (`sequence`, `head_hash`).
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE escrow_accounts (
      account_uuid TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      currency TEXT NOT NULL,
      minor_digits SMALLINT NOT NULL,
      purpose TEXT,
      agent_id TEXT,
      counterparty_org_uuid TEXT,
      counterparty JSONB,
      balance_minor BIGINT NOT NULL DEFAULT 0 CHECK (balance_minor >= 0),
      status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'frozen')),
      sequence BIGINT NOT NULL DEFAULT 0,
      head_hash TEXT,
      created_by TEXT NOT NULL,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX escrow_accounts_org_created ON escrow_accounts (org_uuid, created_at DESC, account_uuid DESC)`
  yield* sql`
    CREATE TABLE escrow_transactions (
      transaction_id TEXT PRIMARY KEY,
      account_uuid TEXT NOT NULL REFERENCES escrow_accounts (account_uuid) ON DELETE CASCADE,
      org_uuid TEXT NOT NULL,
      sequence BIGINT NOT NULL,
      type TEXT NOT NULL CHECK (type IN ('deposit', 'release')),
      amount_minor BIGINT NOT NULL CHECK (amount_minor > 0),
      fee_minor BIGINT CHECK (fee_minor >= 0),
      net_minor BIGINT CHECK (net_minor >= 0),
      balance_after_minor BIGINT NOT NULL CHECK (balance_after_minor >= 0),
      description TEXT,
      reference TEXT,
      reference_action_uuid TEXT,
      receipt JSONB NOT NULL,
      created_by TEXT NOT NULL,
      created_at TIMESTAMPTZ NOT NULL,
      UNIQUE (account_uuid, sequence)
    )`
  yield* sql`
    CREATE TABLE escrow_disputes (
      dispute_id TEXT PRIMARY KEY,
      account_uuid TEXT NOT NULL REFERENCES escrow_accounts (account_uuid) ON DELETE CASCADE,
      org_uuid TEXT NOT NULL,
      amount_minor BIGINT NOT NULL CHECK (amount_minor > 0),
      reason TEXT NOT NULL,
      description TEXT,
      reference_action_uuid TEXT,
      evidence_package_uuid TEXT,
      status TEXT NOT NULL CHECK (status IN ('open', 'resolved')),
      receipt JSONB NOT NULL,
      opened_by TEXT NOT NULL,
      opened_at TIMESTAMPTZ NOT NULL,
      resolution TEXT,
      resolution_note TEXT,
      resolution_receipt JSONB,
      resolved_by TEXT,
      resolved_at TIMESTAMPTZ
    )`
  yield* sql`CREATE UNIQUE INDEX escrow_disputes_one_open ON escrow_disputes (account_uuid) WHERE status = 'open'`
  yield* sql`CREATE INDEX escrow_disputes_account ON escrow_disputes (account_uuid, opened_at DESC)`
})
