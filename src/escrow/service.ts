/**
 * Escrow accounts: liability-commitment ledgers (no real funds are held). Every change to an
 * account locks its row in Postgres first (SELECT … FOR UPDATE), checks, signs a receipt and
 * writes in one transaction, so concurrent deposits and releases, in this process or another,
 * apply one at a time and a balance can never go negative. Each signed record names the
 * account's previous one (`sequence`, `previous_payload_hash`), so a gap or an edit is detectable.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Principal } from "../../protocol/auth.js"
import { listPage, type Page } from "../../protocol/common.js"
import type {
  CreateAccountRequest,
  DisputeRequest,
  EscrowAccount,
  EscrowAccountListItem,
  EscrowAccountView,
  EscrowDispute,
  EscrowReceipt,
  EscrowTransaction,
  MovementRequest,
  ResolveDisputeRequest
} from "../../protocol/escrow.js"
import { auditActor, insertAudit } from "../platform/audit.js"
import { Config } from "../platform/config.js"
import { InvalidInput } from "../platform/domain-error.js"
import { newId, newUuid } from "../platform/ids.js"
import { Receipts } from "../receipts/service.js"
import {
  AccountFrozen,
  DisputeAlreadyOpen,
  DisputeEvidenceNotFound,
  DisputeSignatureInvalid,
  EscrowAccountNotFound,
  EscrowAgentDecommissioned,
  EscrowAgentNotFound,
  type EscrowError,
  InsufficientBalance,
  InvalidAmount,
  NoOpenDispute,
  refuse,
  UnsupportedCurrency
} from "./errors.js"
import { type AmountProblem, formatMinor, MAX_BALANCE_MINOR, minorDigits, parseAmount, releaseFee } from "./money.js"
import { disputeSignatureValid } from "./signature.js"
import { type AccountRow, makeEscrowStore } from "./store.js"
import { accountListItem, accountView, disputeView, transactionView } from "./views.js"

export const ESCROW_RECEIPT_VERSION = "1.0"
/** Transactions shown with an account; the rest page at `.../transactions`. */
const NEWEST_TRANSACTIONS = 100

export interface AuditContext {
  readonly requestId: string | null
}

const problemText: Record<AmountProblem | "balance_limit", string> = {
  not_a_decimal: "must be a positive decimal such as \"100.50\"",
  too_many_decimals: "has more decimals than the currency has minor digits",
  not_positive: "must be positive",
  too_large: "is larger than the largest accepted amount",
  balance_limit: "would take the balance above the largest accepted balance"
}

const present = (text: string | null | undefined) => (text === undefined || text === null || text.trim() === "" ? null : text)

export const makeEscrow = Effect.gen(function* () {
  const store = yield* makeEscrowStore
  const receipts = yield* Receipts
  const config = yield* Config

  const load = (principal: Principal, accountUuid: string) =>
    Effect.flatMap(store.find(principal.orgUuid, accountUuid), (row) =>
      row === undefined ? refuse(EscrowAccountNotFound.of(accountUuid)) : Effect.succeed(row)
    )

  /** Inside a transaction: the locked row (gone meanwhile → 404). */
  const locked = (principal: Principal, accountUuid: string) =>
    Effect.flatMap(store.lock(principal.orgUuid, accountUuid), (row) =>
      row === undefined ? refuse(EscrowAccountNotFound.of(accountUuid)) : Effect.succeed(row)
    )

  const amountOf = (input: string | number, account: AccountRow) => {
    const parsed = parseAmount(input, account.minor_digits)
    return "minor" in parsed
      ? Effect.succeed(parsed.minor)
      : refuse(InvalidAmount.of(String(input), account.currency, problemText[parsed.problem]))
  }

  /** Signs `payload` with the platform key; the receipt as answered and stored. */
  const signed = (receiptUuid: string, createdAt: string, payload: Record<string, unknown>) =>
    Effect.map(
      receipts.signDocument({ receipt_version: ESCROW_RECEIPT_VERSION, receipt_uuid: receiptUuid, ...payload }),
      (document): EscrowReceipt => ({
        receipt_uuid: receiptUuid,
        payload_hash: document.payload_hash,
        signature: document.signature,
        public_key_id: document.public_key_id,
        timestamp: createdAt,
        receipt_version: ESCROW_RECEIPT_VERSION,
        signed_payload: document.signed_payload,
        timestamp_token: document.timestamp_token
      })
    )

  /** What every signed record of the account starts with: which account, and the link to the one before. */
  const chained = (account: AccountRow) => ({
    account_uuid: account.account_uuid,
    org_uuid: account.org_uuid,
    agent_id: account.agent_id,
    currency: account.currency,
    sequence: account.sequence + 1,
    previous_payload_hash: account.head_hash
  })

  const move = (principal: Principal, accountUuid: string, type: "deposit" | "release", input: MovementRequest) =>
    Effect.gen(function* () {
      // Existence and the amount are checked before any lock is taken.
      const amount = yield* amountOf(input.amount, yield* load(principal, accountUuid))
      const { row, account } = yield* store.sql
        .withTransaction(
          Effect.gen(function* () {
            const account = yield* locked(principal, accountUuid)
            const money = (minor: bigint) => formatMinor(minor, account.minor_digits)
            if (account.status === "frozen") return yield* refuse(AccountFrozen.of(accountUuid))
            let balance: bigint
            let split: { fee: bigint; net: bigint } | null = null
            if (type === "deposit") {
              balance = account.balance_minor + amount
              if (balance > MAX_BALANCE_MINOR) {
                return yield* refuse(InvalidAmount.of(money(amount), account.currency, problemText.balance_limit))
              }
            } else {
              if (amount > account.balance_minor) {
                return yield* refuse(InsufficientBalance.of(accountUuid, money(account.balance_minor), money(amount)))
              }
              balance = account.balance_minor - amount
              split = releaseFee(amount, config.escrowFeeBasisPoints)
            }
            const transactionId = newId("etx")
            const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
            const createdBy = auditActor(principal)
            const link = chained(account)
            const fields = {
              description: present(input.description),
              reference: present(input.reference) ?? present(input.reference_action_uuid),
              referenceActionUuid: present(input.reference_action_uuid)
            }
            const receipt = yield* signed(newId("rct"), createdAt, {
              receipt_type: "escrow_transaction",
              transaction_id: transactionId,
              ...link,
              type,
              amount: money(amount),
              fee: split === null ? null : money(split.fee),
              net_release: split === null ? null : money(split.net),
              balance_after: money(balance),
              description: fields.description,
              reference: fields.reference,
              reference_action_uuid: fields.referenceActionUuid,
              created_by: createdBy,
              created_at: createdAt
            })
            const row = yield* store.insertTransaction({
              transactionId,
              accountUuid,
              orgUuid: principal.orgUuid,
              sequence: link.sequence,
              type,
              amount,
              fee: split?.fee ?? null,
              net: split?.net ?? null,
              balanceAfter: balance,
              ...fields,
              receipt,
              createdBy,
              createdAt
            })
            yield* store.advance(accountUuid, { balance, status: account.status, sequence: link.sequence, headHash: receipt.payload_hash })
            return { row, account }
          })
        )
        // Beginning or committing the transaction.
        .pipe(Effect.catchTag("SqlError", Effect.die))
      return transactionView(row, account)
    })

  const create = Effect.fn("Escrow.create")(function* (principal: Principal, input: CreateAccountRequest, context: AuditContext) {
    const currency = (input.currency ?? "EUR").toUpperCase()
    const digits = minorDigits(currency)
    if (digits === undefined) return yield* refuse(UnsupportedCurrency.of(input.currency ?? ""))
    const agentId = present(input.agent_id)
    if (agentId !== null) {
      const status = yield* store.agentStatus(principal.orgUuid, agentId)
      if (status === undefined) return yield* refuse(EscrowAgentNotFound.of(agentId))
      if (status === "decommissioned") return yield* refuse(EscrowAgentDecommissioned.of(agentId))
    }
    const row = yield* store.sql
      .withTransaction(
        Effect.gen(function* () {
          const row = yield* store.insertAccount({
            accountUuid: newUuid(),
            orgUuid: principal.orgUuid,
            currency,
            minorDigits: digits,
            purpose: present(input.purpose),
            agentId,
            counterpartyOrgUuid: present(input.counterparty_org_uuid),
            counterparty: input.counterparty ?? null,
            createdBy: auditActor(principal)
          })
          yield* insertAudit(store.sql, {
            orgUuid: principal.orgUuid,
            actor: auditActor(principal),
            event: "escrow.account_created",
            target: row.account_uuid,
            details: { currency, agent_id: agentId },
            requestId: context.requestId
          })
          return row
        })
      )
      // The audit insert and the transaction itself.
      .pipe(Effect.catchTag("SqlError", Effect.die))
    return accountView(row, 0)
  })

  const list = Effect.fn("Escrow.list")(function* (principal: Principal, query: PageRequest) {
    const page = query.page ?? 1
    const perPage = query.per_page ?? 20
    const { rows, total } = yield* store.list(principal.orgUuid, page, perPage)
    return listPage(rows.map(accountListItem), { page, perPage, total }, "accounts")
  })

  const get = Effect.fn("Escrow.get")(function* (principal: Principal, accountUuid: string) {
    const account = yield* load(principal, accountUuid)
    const [{ rows, total }, disputes] = yield* Effect.all([store.transactions(accountUuid, 1, NEWEST_TRANSACTIONS), store.disputes(accountUuid)])
    return {
      ...accountView(account, total),
      transactions: rows.map((row) => transactionView(row, account)),
      disputes: disputes.map((row) => disputeView(row, account))
    }
  })

  const transactions = Effect.fn("Escrow.transactions")(function* (principal: Principal, accountUuid: string, query: PageRequest) {
    const account = yield* load(principal, accountUuid)
    const page = query.page ?? 1
    const perPage = query.per_page ?? 20
    const { rows, total } = yield* store.transactions(accountUuid, page, perPage)
    return listPage(
      rows.map((row) => transactionView(row, account)),
      { page, perPage, total },
      "transactions"
    )
  })

  const deposit = Effect.fn("Escrow.deposit")(function* (principal: Principal, accountUuid: string, input: MovementRequest) {
    return yield* move(principal, accountUuid, "deposit", input)
  })

  const release = Effect.fn("Escrow.release")(function* (principal: Principal, accountUuid: string, input: MovementRequest) {
    return yield* move(principal, accountUuid, "release", input)
  })

  const dispute = Effect.fn("Escrow.dispute")(function* (
    principal: Principal,
    accountUuid: string,
    input: DisputeRequest,
    credential: string,
    context: AuditContext
  ) {
    const current = yield* load(principal, accountUuid)
    const reason = present(input.reason) ?? present(input.description)
    // Name the field the caller uses: the spec's `description`, or `reason` when the SDK's form was sent.
    if (reason === null) return yield* refuse(InvalidInput.one(input.reason !== undefined ? "reason" : "description", "is required: say why the dispute is opened"))
    const amount = yield* amountOf(input.amount, current)
    const evidence = present(input.evidence_package_uuid)
    const signature = present(input.signature)
    if (signature !== null) {
      const terms = { account_uuid: accountUuid, amount: formatMinor(amount, current.minor_digits), reason, evidence_package_uuid: evidence }
      if (!disputeSignatureValid(credential, terms, signature)) return yield* refuse(DisputeSignatureInvalid.of(accountUuid))
    }
    if (evidence !== null && !(yield* store.evidenceExists(principal.orgUuid, evidence))) {
      return yield* refuse(DisputeEvidenceNotFound.of(evidence))
    }
    const { row, account } = yield* store.sql
      .withTransaction(
        Effect.gen(function* () {
          const account = yield* locked(principal, accountUuid)
          const open = yield* store.openDispute(accountUuid)
          if (open !== undefined) return yield* refuse(DisputeAlreadyOpen.of(accountUuid, open.dispute_id))
          const disputeId = newId("dsp")
          const openedAt = new Date(yield* Clock.currentTimeMillis).toISOString()
          const openedBy = auditActor(principal)
          const link = chained(account)
          const description = present(input.description)
          const referenceActionUuid = present(input.reference_action_uuid)
          const receipt = yield* signed(newId("rct"), openedAt, {
            receipt_type: "escrow_dispute",
            dispute_id: disputeId,
            ...link,
            amount: formatMinor(amount, account.minor_digits),
            balance: formatMinor(account.balance_minor, account.minor_digits),
            reason,
            description,
            reference_action_uuid: referenceActionUuid,
            evidence_package_uuid: evidence,
            status: "open",
            account_status: "frozen",
            opened_by: openedBy,
            opened_at: openedAt
          })
          const row = yield* store.insertDispute({
            disputeId,
            accountUuid,
            orgUuid: principal.orgUuid,
            amount,
            reason,
            description,
            referenceActionUuid,
            evidencePackageUuid: evidence,
            receipt,
            openedBy,
            openedAt
          })
          yield* store.advance(accountUuid, { balance: account.balance_minor, status: "frozen", sequence: link.sequence, headHash: receipt.payload_hash })
          yield* insertAudit(store.sql, {
            orgUuid: principal.orgUuid,
            actor: openedBy,
            event: "escrow.dispute_opened",
            target: accountUuid,
            details: { dispute_id: disputeId, payload_hash: receipt.payload_hash },
            requestId: context.requestId
          })
          return { row, account }
        })
      )
      .pipe(Effect.catchTag("SqlError", Effect.die))
    return disputeView(row, account)
  })

  const resolve = Effect.fn("Escrow.resolve")(function* (principal: Principal, accountUuid: string, input: ResolveDisputeRequest, context: AuditContext) {
    yield* load(principal, accountUuid)
    const { row, account } = yield* store.sql
      .withTransaction(
        Effect.gen(function* () {
          const account = yield* locked(principal, accountUuid)
          const open = yield* store.openDispute(accountUuid)
          if (open === undefined) return yield* refuse(NoOpenDispute.of(accountUuid))
          const resolvedAt = new Date(yield* Clock.currentTimeMillis).toISOString()
          const resolvedBy = auditActor(principal)
          const note = present(input.note)
          const link = chained(account)
          const receipt = yield* signed(newId("rct"), resolvedAt, {
            receipt_type: "escrow_dispute_resolution",
            dispute_id: open.dispute_id,
            ...link,
            dispute_payload_hash: open.receipt.payload_hash,
            balance: formatMinor(account.balance_minor, account.minor_digits),
            resolution: input.resolution,
            note,
            status: "resolved",
            account_status: "active",
            resolved_by: resolvedBy,
            resolved_at: resolvedAt
          })
          const row = yield* store.resolveDispute({ disputeId: open.dispute_id, resolution: input.resolution, note, receipt, resolvedBy, resolvedAt })
          yield* store.advance(accountUuid, { balance: account.balance_minor, status: "active", sequence: link.sequence, headHash: receipt.payload_hash })
          yield* insertAudit(store.sql, {
            orgUuid: principal.orgUuid,
            actor: resolvedBy,
            event: "escrow.dispute_resolved",
            target: accountUuid,
            details: { dispute_id: open.dispute_id, resolution: input.resolution, payload_hash: receipt.payload_hash },
            requestId: context.requestId
          })
          return { row, account }
        })
      )
      .pipe(Effect.catchTag("SqlError", Effect.die))
    return disputeView(row, account)
  })

  return Escrow.of({ create, list, get, transactions, deposit, release, dispute, resolve })
})

/** A page with the spec's own key for its items besides `data`. */
type KeyedPage<T, K extends string> = Page<T> & { readonly [P in K]: ReadonlyArray<T> }

export interface PageRequest {
  readonly page?: number
  readonly per_page?: number
}

export interface EscrowService {
  readonly create: (principal: Principal, input: CreateAccountRequest, context: AuditContext) => Effect.Effect<EscrowAccount, EscrowError>
  readonly list: (principal: Principal, query: PageRequest) => Effect.Effect<KeyedPage<EscrowAccountListItem, "accounts">>
  readonly get: (principal: Principal, accountUuid: string) => Effect.Effect<EscrowAccountView, EscrowError>
  readonly transactions: (principal: Principal, accountUuid: string, query: PageRequest) => Effect.Effect<KeyedPage<EscrowTransaction, "transactions">, EscrowError>
  readonly deposit: (principal: Principal, accountUuid: string, input: MovementRequest) => Effect.Effect<EscrowTransaction, EscrowError>
  /** Lowers the balance by the gross amount; the fee and the net part are recorded with it. */
  readonly release: (principal: Principal, accountUuid: string, input: MovementRequest) => Effect.Effect<EscrowTransaction, EscrowError>
  /**
   * Opens a dispute and freezes the account. `credential` is the request's bearer credential,
   * which keys the optional signature (src/escrow/signature.ts).
   */
  readonly dispute: (
    principal: Principal,
    accountUuid: string,
    input: DisputeRequest,
    credential: string,
    context: AuditContext
  ) => Effect.Effect<EscrowDispute, EscrowError>
  /** Closes the open dispute with a signed receipt and unfreezes the account; moves no money (see docs/decisions.md). */
  readonly resolve: (principal: Principal, accountUuid: string, input: ResolveDisputeRequest, context: AuditContext) => Effect.Effect<EscrowDispute, EscrowError>
}

export class Escrow extends Context.Service<Escrow, EscrowService>()("gateway/Escrow") {
  static readonly layer = Layer.effect(Escrow, makeEscrow)
}
