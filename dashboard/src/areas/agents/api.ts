/**
 * The agents area's calls (spec 001 "Agents", "DIDs and agent cards", "Verifiable credentials",
 * "Mutual signing"; reputation from CONTRACT-sdk-beyond §3). Types come from protocol/ (types only).
 */
import type { ActionListItem } from "../../../../protocol/actions.ts"
import type { AgentListItem, AgentVersion, AgentView, Decommissioned, Transferred } from "../../../../protocol/agents.ts"
import type { Pagination } from "../../../../protocol/common.ts"
import type { CredentialRecord, Revoked } from "../../../../protocol/credentials.ts"
import type { AgentCard, AgentDidInfo, Rotated } from "../../../../protocol/dids.ts"
import type { PendingMutualSign } from "../../../../protocol/mutual-signing.ts"
import type { Reputation } from "../../../../protocol/reputation.ts"
import { ApiError, request } from "../../api.ts"

export type { ActionListItem, AgentCard, AgentDidInfo, AgentListItem, AgentVersion, AgentView, CredentialRecord, PendingMutualSign, Reputation }

const id = encodeURIComponent
const agentPath = (slug: string) => `/api/v1/agents/${id(slug)}`

export interface AgentPage {
  readonly agents: ReadonlyArray<AgentListItem>
  readonly pagination: Pagination
}

export const AGENT_STATUSES = ["active", "decommissioned"] as const

/** One page of the organization's agents, newest first; only those of `status` when it is not empty. */
export const listAgents = (token: string, page: number, perPage: number, status = "") =>
  request<AgentPage>("GET", `/api/v1/agents?page=${page}&per_page=${perPage}${status === "" ? "" : `&status=${encodeURIComponent(status)}`}`, token)

export const getAgent = (token: string, slug: string) => request<AgentView>("GET", agentPath(slug), token)

/** Every version, newest first (a bare array). */
export const listVersions = (token: string, slug: string) => request<ReadonlyArray<AgentVersion>>("GET", `${agentPath(slug)}/versions`, token)

export const decommissionAgent = (token: string, slug: string, reason: string) =>
  request<Decommissioned>("POST", `${agentPath(slug)}/decommission`, token, { reason })

/**
 * The owner's signature of a transfer (src/agents/transfer.ts): `hmac-sha256:` + hex HMAC-SHA256 of
 * the JCS of `{agent_slug, from_org, to_org}`, keyed by the bearer credential the request carries —
 * here the session's JWT. The three keys are already in JCS order and hold plain strings, for which
 * JSON.stringify writes what JCS writes.
 */
export const transferSignature = async (token: string, terms: { agent_slug: string; from_org: string; to_org: string }) => {
  const encoder = new TextEncoder()
  const key = await crypto.subtle.importKey("raw", encoder.encode(token), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
  const canonical = JSON.stringify({ agent_slug: terms.agent_slug, from_org: terms.from_org, to_org: terms.to_org })
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(canonical)))
  return `hmac-sha256:${Array.from(mac, (byte) => byte.toString(16).padStart(2, "0")).join("")}`
}

export const transferAgent = async (token: string, slug: string, fromOrg: string, targetOrg: string) => {
  const signature = await transferSignature(token, { agent_slug: slug, from_org: fromOrg, to_org: targetOrg })
  return request<Transferred>("POST", `${agentPath(slug)}/transfer`, token, { target_org_id: targetOrg, signature })
}

export const getDid = (token: string, slug: string) => request<AgentDidInfo>("GET", `${agentPath(slug)}/did`, token)

export const rotateDid = (token: string, slug: string) => request<Rotated>("POST", `${agentPath(slug)}/did/rotate`, token)

/** Where the agent card is published (public, at the root). */
export const agentCardPath = (slug: string) => `/agents/${id(slug)}/.well-known/agent-card.json`
export const didDocumentPath = (slug: string) => `/agents/${id(slug)}/did.json`

/** Public routes (card, status list, reputation, mutual signing) are called without the session's token: they ignore it. */
export const getAgentCard = (slug: string) => request<AgentCard>("GET", agentCardPath(slug), undefined)

export const listCredentials = (token: string, slug: string) =>
  request<{ readonly credentials: ReadonlyArray<CredentialRecord> }>("GET", `${agentPath(slug)}/credentials`, token)

/** Revokes the agent's active credential (the API revokes the one active credential, not one by id). */
export const revokeCredential = (token: string, slug: string, reason: string) => request<Revoked>("POST", `${agentPath(slug)}/credentials/revoke`, token, { reason })

export interface StatusEntry {
  readonly statusListCredential: string
  readonly statusListIndex: string
  readonly statusPurpose: string
}

/** The credential's StatusList2021 entry, when it has a readable one. */
export const statusEntryOf = (credential: CredentialRecord): StatusEntry | undefined => {
  const status = (credential.vc_json as { credentialStatus?: Partial<StatusEntry> }).credentialStatus
  if (status === undefined || typeof status.statusListCredential !== "string" || typeof status.statusListIndex !== "string") return undefined
  return { statusListCredential: status.statusListCredential, statusListIndex: status.statusListIndex, statusPurpose: status.statusPurpose ?? "revocation" }
}

/**
 * A status list's bits: the list is published at the gateway's root (`/credentials/status/<id>`);
 * only its path is fetched, from this origin (the page may not call another). `encodedList` is GZIP
 * then base64url; bit i is byte i/8, most significant bit first.
 */
export const loadStatusBits = async (listUrl: string): Promise<Uint8Array> => {
  const path = new URL(listUrl, location.origin).pathname
  if (!path.startsWith("/credentials/status/")) throw new ApiError(0, "UNSUPPORTED", "The status list is not published by this gateway.")
  const list = await request<{ credentialSubject?: { encodedList?: string } }>("GET", path, undefined)
  const encoded = list.credentialSubject?.encodedList
  if (typeof encoded !== "string") throw new ApiError(0, "UNREADABLE", "The status list has no encoded list.")
  const base64 = encoded.replaceAll("-", "+").replaceAll("_", "/")
  const packed = Uint8Array.from(atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4)), (char) => char.charCodeAt(0))
  const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream("gzip"))
  return new Uint8Array(await new Response(stream).arrayBuffer())
}

export const bitSet = (bits: Uint8Array, index: number) => ((bits[index >> 3] ?? 0) & (0x80 >> (index & 7))) !== 0

export const getReputation = (slug: string) => request<Reputation>("GET", `${agentPath(slug)}/reputation`, undefined)

export interface AgentActions {
  readonly data: ReadonlyArray<ActionListItem>
  readonly pagination: Pagination
}

export const listAgentActions = (token: string, slug: string, page: number, perPage: number) =>
  request<AgentActions>("GET", `${agentPath(slug)}/actions?page=${page}&per_page=${perPage}`, token)

/** The action's mutual-signing request in any state (pending, completed, rejected, expired); undefined when it has none. */
export const mutualSignOf = async (actionUuid: string): Promise<PendingMutualSign | undefined> => {
  try {
    return await request<PendingMutualSign>("GET", `/api/v1/actions/${id(actionUuid)}/mutual-sign/pending`, undefined)
  } catch (cause) {
    if (cause instanceof ApiError && cause.status === 404) return undefined
    throw cause
  }
}
