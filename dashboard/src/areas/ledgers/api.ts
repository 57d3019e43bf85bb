/** The ledgers area's calls: escrow, settlements, evidence and estate (field names from protocol/). */
import type { AgentListItem, AgentView } from "../../../../protocol/agents.ts"
import type { Pagination } from "../../../../protocol/common.ts"
import type { CreateAccountRequest, DisputeResolutions, EscrowAccount, EscrowAccountListItem, EscrowAccountView, EscrowDispute, EscrowTransaction } from "../../../../protocol/escrow.ts"
import type { ComplianceSnapshot, DeathCertificateAnswer, DeathCertificateRequest, WillAnswer, WillRequest } from "../../../../protocol/estate.ts"
import type { CreatePackageRequest, DiscoveryRecord, EvidencePackage, LiabilityChain, PackageSummary, TimeTravelRequest } from "../../../../protocol/evidence.ts"
import type { SettledReceipt, Settlement, SettlementCheckpoint } from "../../../../protocol/settlements.ts"
import { request } from "../../api.ts"
import type { ConsistencyProofWire, InclusionProofWire } from "./merkle.ts"

export type { AgentListItem, AgentView, ComplianceSnapshot, DeathCertificateAnswer, DiscoveryRecord, EscrowAccount, EscrowAccountListItem, EscrowAccountView, EscrowDispute, EscrowTransaction, EvidencePackage, LiabilityChain, PackageSummary, SettledReceipt, Settlement, SettlementCheckpoint, WillAnswer }
export type Resolution = (typeof DisputeResolutions)[number]

const id = encodeURIComponent
const paged = (page: number, perPage: number, extra: Record<string, string | undefined> = {}) => {
  const query = new URLSearchParams({ page: String(page), per_page: String(perPage) })
  for (const [key, value] of Object.entries(extra)) if (value !== undefined && value !== "") query.set(key, value)
  return query.toString()
}

/* Escrow */

const ESCROW = "/api/v1/escrow/accounts"

export const listAccounts = (token: string, page: number, perPage: number) =>
  request<{ accounts: ReadonlyArray<EscrowAccountListItem>; pagination: Pagination }>("GET", `${ESCROW}?${paged(page, perPage)}`, token)

export const createAccount = (token: string, body: CreateAccountRequest) => request<EscrowAccount>("POST", ESCROW, token, body)

export const getAccount = (token: string, accountUuid: string) => request<EscrowAccountView>("GET", `${ESCROW}/${id(accountUuid)}`, token)

/** Newest first (by sequence). */
export const listTransactions = (token: string, accountUuid: string, page: number, perPage: number) =>
  request<{ transactions: ReadonlyArray<EscrowTransaction>; pagination: Pagination }>("GET", `${ESCROW}/${id(accountUuid)}/transactions?${paged(page, perPage)}`, token)

export const moveFunds = (token: string, accountUuid: string, kind: "deposit" | "release", body: { amount: string; description?: string }) =>
  request<EscrowTransaction>("POST", `${ESCROW}/${id(accountUuid)}/${kind}`, token, body)

export const openDispute = (token: string, accountUuid: string, body: { amount: string; description: string; evidence_package_uuid?: string }) =>
  request<EscrowDispute>("POST", `${ESCROW}/${id(accountUuid)}/dispute`, token, body)

export const resolveDispute = (token: string, accountUuid: string, body: { resolution: Resolution; note?: string }) =>
  request<EscrowDispute>("POST", `${ESCROW}/${id(accountUuid)}/dispute/resolve`, token, body)

/* Settlements */

const SETTLEMENTS = "/api/v1/settlements"

export type SettlementSummary = Pick<Settlement, "id" | "period_start" | "period_end" | "receipt_count" | "merkle_root" | "sealed_at">

export const listSettlements = (token: string, page: number, perPage: number) =>
  request<{ data: ReadonlyArray<SettlementSummary>; pagination: Pagination }>("GET", `${SETTLEMENTS}?${paged(page, perPage)}`, token)

/** Seals every unsettled receipt (owner or admin); null when there was none. */
export const sealSettlement = (token: string) => request<Settlement | null>("POST", SETTLEMENTS, token)

export const getSettlement = (token: string, settlementUuid: string) => request<Settlement>("GET", `${SETTLEMENTS}/${id(settlementUuid)}`, token)

/** The settlement's receipts in leaf order (a bare array). */
export const settlementReceipts = (token: string, settlementUuid: string, page: number, perPage: number) =>
  request<ReadonlyArray<SettledReceipt>>("GET", `${SETTLEMENTS}/${id(settlementUuid)}/receipts?${paged(page, perPage)}`, token)

export const getCheckpoint = (token: string, settlementUuid: string) => request<SettlementCheckpoint>("GET", `${SETTLEMENTS}/${id(settlementUuid)}/checkpoint`, token)

export const inclusionProof = (token: string, receiptUuid: string) => request<InclusionProofWire>("GET", `${SETTLEMENTS}/inclusion-proof/${id(receiptUuid)}`, token)

export const consistencyProof = (token: string, from: string, to: string) =>
  request<ConsistencyProofWire>("GET", `${SETTLEMENTS}/consistency?${new URLSearchParams({ from, to })}`, token)

/* Evidence */

const EVIDENCE = "/api/v1/evidence"

export const listPackages = (token: string, page: number, perPage: number) =>
  request<{ packages: ReadonlyArray<PackageSummary>; pagination: Pagination }>("GET", `${EVIDENCE}/packages?${paged(page, perPage)}`, token)

export const createPackage = (token: string, body: CreatePackageRequest) => request<PackageSummary>("POST", `${EVIDENCE}/packages`, token, body)

export const getPackage = (token: string, packageUuid: string) => request<EvidencePackage>("GET", `${EVIDENCE}/packages/${id(packageUuid)}`, token)

/** An audited as-of query: every call is recorded with its reason. */
export const timeTravel = (token: string, body: TimeTravelRequest) => request<DiscoveryRecord>("POST", `${EVIDENCE}/time-travel`, token, body)

export const liabilityChain = (token: string, actionUuid: string) => request<LiabilityChain>("GET", `${EVIDENCE}/liability-chain/${id(actionUuid)}`, token)

/* Estate */

export const listAgents = (token: string, page: number, perPage: number) =>
  request<{ agents: ReadonlyArray<AgentListItem>; pagination: Pagination }>("GET", `/api/v1/agents?${paged(page, perPage)}`, token)

export const getAgent = (token: string, slug: string) => request<AgentView>("GET", `/api/v1/agents/${id(slug)}`, token)

const ESTATE = "/api/v1/estate"

export const getWill = (token: string, slug: string) => request<WillAnswer>("GET", `${ESTATE}/agents/${id(slug)}/will`, token)

export const putWill = (token: string, slug: string, body: WillRequest) => request<WillAnswer>("PUT", `${ESTATE}/agents/${id(slug)}/will`, token, body)

export const getDeathCertificate = (token: string, slug: string) => request<DeathCertificateAnswer>("GET", `${ESTATE}/agents/${id(slug)}/death-certificate`, token)

export const issueDeathCertificate = (token: string, slug: string, body: DeathCertificateRequest) =>
  request<DeathCertificateAnswer>("POST", `${ESTATE}/agents/${id(slug)}/death-certificate`, token, body)

export const listSnapshots = (token: string, agentSlug: string, page: number, perPage: number) =>
  request<{ snapshots: ReadonlyArray<ComplianceSnapshot>; pagination: Pagination }>("GET", `${ESTATE}/compliance?${paged(page, perPage, { agent_slug: agentSlug })}`, token)
