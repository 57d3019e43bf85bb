/**
 * SQL for escrow ledgers. Minor units travel to Postgres as decimal text cast to BIGINT and come
 * back as bigint, so no amount ever passes through a float.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { Counterparty, DisputeResolutions, EscrowReceipt } from "../../protocol/escrow.js"
import { Count, Json, NullableJson, NullableTimestamp, Serial, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"
import { offset } from "../platform/sql.js"

/** An int8 column as an exact bigint (the driver hands int8 over as text or bigint, never a float). */
const Minor = Serial
const NullableMinor = Schema.NullOr(Serial)

/** A statement that always answers a row (an INSERT … RETURNING, a count): no row is a defect. */
const always = <A, E, R>(effect: Effect.Effect<A, E | Cause.NoSuchElementError, R>): Effect.Effect<A, Exclude<E, Cause.NoSuchElementError>, R> =>
  Effect.catchIf(effect, Cause.isNoSuchElementError, (error) => Effect.die(error)) as Effect.Effect<A, Exclude<E, Cause.NoSuchElementError>, R>

const AccountRow = Schema.Struct({
  account_uuid: Schema.String,
  org_uuid: Schema.String,
  currency: Schema.String,
  minor_digits: Schema.Number,
  purpose: Schema.NullOr(Schema.String),
  agent_id: Schema.NullOr(Schema.String),
  counterparty_org_uuid: Schema.NullOr(Schema.String),
  counterparty: NullableJson(Counterparty),
  balance_minor: Minor,
  status: Schema.Literals(["active", "frozen"]),
  sequence: Count,
  head_hash: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
})
export type AccountRow = typeof AccountRow.Type

const TransactionRow = Schema.Struct({
  transaction_id: Schema.String,
  account_uuid: Schema.String,
  sequence: Count,
  type: Schema.Literals(["deposit", "release"]),
  amount_minor: Minor,
  fee_minor: NullableMinor,
  net_minor: NullableMinor,
  balance_after_minor: Minor,
  description: Schema.NullOr(Schema.String),
  reference: Schema.NullOr(Schema.String),
  reference_action_uuid: Schema.NullOr(Schema.String),
  receipt: Json(EscrowReceipt),
  created_by: Schema.String,
  created_at: Timestamp
})
export type TransactionRow = typeof TransactionRow.Type

const DisputeRow = Schema.Struct({
  dispute_id: Schema.String,
  account_uuid: Schema.String,
  amount_minor: Minor,
  reason: Schema.String,
  description: Schema.NullOr(Schema.String),
  reference_action_uuid: Schema.NullOr(Schema.String),
  evidence_package_uuid: Schema.NullOr(Schema.String),
  status: Schema.Literals(["open", "resolved"]),
  receipt: Json(EscrowReceipt),
  opened_by: Schema.String,
  opened_at: Timestamp,
  resolution: Schema.NullOr(Schema.Literals(DisputeResolutions)),
  resolution_note: Schema.NullOr(Schema.String),
  resolution_receipt: NullableJson(EscrowReceipt),
  resolved_by: Schema.NullOr(Schema.String),
  resolved_at: NullableTimestamp
})
export type DisputeRow = typeof DisputeRow.Type

export interface NewAccount {
  readonly accountUuid: string
  readonly orgUuid: string
  readonly currency: string
  readonly minorDigits: number
  readonly purpose: string | null
  readonly agentId: string | null
  readonly counterpartyOrgUuid: string | null
  readonly counterparty: typeof Counterparty.Type | null
  readonly createdBy: string
}

export interface NewTransaction {
  readonly transactionId: string
  readonly accountUuid: string
  readonly orgUuid: string
  readonly sequence: number
  readonly type: "deposit" | "release"
  readonly amount: bigint
  readonly fee: bigint | null
  readonly net: bigint | null
  readonly balanceAfter: bigint
  readonly description: string | null
  readonly reference: string | null
  readonly referenceActionUuid: string | null
  readonly receipt: EscrowReceipt
  readonly createdBy: string
  readonly createdAt: string
}

export interface NewDispute {
  readonly disputeId: string
  readonly accountUuid: string
  readonly orgUuid: string
  readonly amount: bigint
  readonly reason: string
  readonly description: string | null
  readonly referenceActionUuid: string | null
  readonly evidencePackageUuid: string | null
  readonly receipt: EscrowReceipt
  readonly openedBy: string
  readonly openedAt: string
}

export interface DisputeResolution {
  readonly disputeId: string
  readonly resolution: string
  readonly note: string | null
  readonly receipt: EscrowReceipt
  readonly resolvedBy: string
  readonly resolvedAt: string
}

const minorText = (value: bigint | null) => (value === null ? null : value.toString())

const ByAccount = Schema.Struct({ orgUuid: Schema.String, accountUuid: Schema.String })

export const makeEscrowStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const insertAccount = Rows.findOne({
    Request: Schema.Any,
    Result: AccountRow,
    execute: (a: NewAccount) =>
      sql`INSERT INTO escrow_accounts (account_uuid, org_uuid, currency, minor_digits, purpose, agent_id, counterparty_org_uuid, counterparty, created_by)
          VALUES (${a.accountUuid}, ${a.orgUuid}, ${a.currency}, ${a.minorDigits}, ${a.purpose}, ${a.agentId}, ${a.counterpartyOrgUuid},
            ${a.counterparty === null ? null : jsonb(a.counterparty)}, ${a.createdBy})
          RETURNING *`
  })

  const find = Rows.findOneOption({
    Request: ByAccount,
    Result: AccountRow,
    execute: ({ orgUuid, accountUuid }) => sql`SELECT * FROM escrow_accounts WHERE account_uuid = ${accountUuid} AND org_uuid = ${orgUuid}`
  })

  const lock = Rows.findOneOption({
    Request: ByAccount,
    Result: AccountRow,
    execute: ({ orgUuid, accountUuid }) => sql`SELECT * FROM escrow_accounts WHERE account_uuid = ${accountUuid} AND org_uuid = ${orgUuid} FOR UPDATE`
  })

  const page = Rows.findAll({
    Request: Schema.Struct({ orgUuid: Schema.String, limit: Schema.Number, offset: Schema.Number }),
    Result: AccountRow,
    execute: ({ orgUuid, limit, offset }) =>
      sql`SELECT * FROM escrow_accounts WHERE org_uuid = ${orgUuid} ORDER BY created_at DESC, account_uuid DESC LIMIT ${limit} OFFSET ${offset}`
  })

  const countAccounts = Rows.findOne({
    Request: Schema.String,
    Result: Schema.Struct({ n: Count }),
    execute: (orgUuid) => sql`SELECT count(*) AS n FROM escrow_accounts WHERE org_uuid = ${orgUuid}`
  })

  const transactions = Rows.findAll({
    Request: Schema.Struct({ accountUuid: Schema.String, limit: Schema.Number, offset: Schema.Number }),
    Result: TransactionRow,
    execute: ({ accountUuid, limit, offset }) =>
      sql`SELECT * FROM escrow_transactions WHERE account_uuid = ${accountUuid} ORDER BY sequence DESC LIMIT ${limit} OFFSET ${offset}`
  })

  const countTransactions = Rows.findOne({
    Request: Schema.String,
    Result: Schema.Struct({ n: Count }),
    execute: (accountUuid) => sql`SELECT count(*) AS n FROM escrow_transactions WHERE account_uuid = ${accountUuid}`
  })

  const disputes = Rows.findAll({
    Request: Schema.String,
    Result: DisputeRow,
    execute: (accountUuid) => sql`SELECT * FROM escrow_disputes WHERE account_uuid = ${accountUuid} ORDER BY opened_at DESC, dispute_id DESC`
  })

  const openDispute = Rows.findOneOption({
    Request: Schema.String,
    Result: DisputeRow,
    execute: (accountUuid) => sql`SELECT * FROM escrow_disputes WHERE account_uuid = ${accountUuid} AND status = 'open'`
  })

  const insertTransaction = Rows.findOne({
    Request: Schema.Any,
    Result: TransactionRow,
    execute: (t: NewTransaction) =>
      sql`INSERT INTO escrow_transactions (transaction_id, account_uuid, org_uuid, sequence, type, amount_minor, fee_minor, net_minor,
            balance_after_minor, description, reference, reference_action_uuid, receipt, created_by, created_at)
          VALUES (${t.transactionId}, ${t.accountUuid}, ${t.orgUuid}, ${t.sequence}, ${t.type}, ${minorText(t.amount)}::bigint,
            ${minorText(t.fee)}::bigint, ${minorText(t.net)}::bigint, ${minorText(t.balanceAfter)}::bigint, ${t.description}, ${t.reference},
            ${t.referenceActionUuid}, ${jsonb(t.receipt)}, ${t.createdBy}, ${t.createdAt})
          RETURNING *`
  })

  const insertDispute = Rows.findOne({
    Request: Schema.Any,
    Result: DisputeRow,
    execute: (d: NewDispute) =>
      sql`INSERT INTO escrow_disputes (dispute_id, account_uuid, org_uuid, amount_minor, reason, description, reference_action_uuid,
            evidence_package_uuid, status, receipt, opened_by, opened_at)
          VALUES (${d.disputeId}, ${d.accountUuid}, ${d.orgUuid}, ${minorText(d.amount)}::bigint, ${d.reason}, ${d.description},
            ${d.referenceActionUuid}, ${d.evidencePackageUuid}, 'open', ${jsonb(d.receipt)}, ${d.openedBy}, ${d.openedAt})
          RETURNING *`
  })

  const resolveDispute = Rows.findOne({
    Request: Schema.Any,
    Result: DisputeRow,
    execute: (r: DisputeResolution) =>
      sql`UPDATE escrow_disputes SET status = 'resolved', resolution = ${r.resolution}, resolution_note = ${r.note},
            resolution_receipt = ${jsonb(r.receipt)}, resolved_by = ${r.resolvedBy}, resolved_at = ${r.resolvedAt}
          WHERE dispute_id = ${r.disputeId} AND status = 'open' RETURNING *`
  })

  const agentStatus = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, slug: Schema.String }),
    Result: Schema.Struct({ status: Schema.String }),
    execute: ({ orgUuid, slug }) => sql`SELECT status FROM agents WHERE agent_slug = ${slug} AND org_uuid = ${orgUuid}`
  })

  // Compared as text: a malformed id simply matches nothing.
  const evidenceExists = Rows.findOne({
    Request: Schema.Struct({ orgUuid: Schema.String, packageUuid: Schema.String }),
    Result: Schema.Struct({ found: Schema.Boolean }),
    execute: ({ orgUuid, packageUuid }) =>
      sql`SELECT EXISTS (SELECT 1 FROM evidence_packages WHERE package_uuid::text = ${packageUuid} AND org_uuid::text = ${orgUuid}) AS found`
  })

  const advance = Rows.void({
    Request: Schema.Any,
    execute: (next: { accountUuid: string; balance: bigint; status: "active" | "frozen"; sequence: number; headHash: string }) =>
      sql`UPDATE escrow_accounts SET balance_minor = ${next.balance.toString()}::bigint, status = ${next.status}, sequence = ${next.sequence},
            head_hash = ${next.headHash}, updated_at = now()
          WHERE account_uuid = ${next.accountUuid}`
  })

  return sqlDefects({
    sql,

    /** The agent's status when `slug` is an agent of the organization. */
    agentStatus: (orgUuid: string, slug: string) =>
      Effect.map(agentStatus({ orgUuid, slug }), (row) => Option.getOrUndefined(Option.map(row, (found) => found.status))),

    /** Whether the organization has that evidence package. */
    evidenceExists: (orgUuid: string, packageUuid: string) =>
      Effect.map(always(evidenceExists({ orgUuid, packageUuid })), (row) => row.found),

    insertAccount: (account: NewAccount) => always(insertAccount(account)),
    find: (orgUuid: string, accountUuid: string) => Effect.map(find({ orgUuid, accountUuid }), Option.getOrUndefined),
    /** The account row locked until the transaction ends: every change to an account goes through here first. */
    lock: (orgUuid: string, accountUuid: string) => Effect.map(lock({ orgUuid, accountUuid }), Option.getOrUndefined),

    list: (orgUuid: string, pageNumber: number, perPage: number) =>
      Effect.all({
        rows: page({ orgUuid, limit: perPage, offset: offset(pageNumber, perPage) }),
        total: Effect.map(always(countAccounts(orgUuid)), (row) => row.n)
      }),

    /** Newest first. */
    transactions: (accountUuid: string, pageNumber: number, perPage: number) =>
      Effect.all({
        rows: transactions({ accountUuid, limit: perPage, offset: offset(pageNumber, perPage) }),
        total: Effect.map(always(countTransactions(accountUuid)), (row) => row.n)
      }),

    disputes,
    openDispute: (accountUuid: string) => Effect.map(openDispute(accountUuid), Option.getOrUndefined),
    insertTransaction: (transaction: NewTransaction) => always(insertTransaction(transaction)),
    insertDispute: (dispute: NewDispute) => always(insertDispute(dispute)),
    /** Only called with the account locked and its open dispute just read, so the row is there. */
    resolveDispute: (resolution: DisputeResolution) => always(resolveDispute(resolution)),

    /** The account after a signed event: its balance, status and chain head. */
    advance: (accountUuid: string, next: { balance: bigint; status: "active" | "frozen"; sequence: number; headHash: string }) =>
      advance({ accountUuid, ...next })
  })
})

export type EscrowStore = Effect.Success<typeof makeEscrowStore>
