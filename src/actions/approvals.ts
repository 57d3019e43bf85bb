/**
 * Approval credentials (CONTRACT.md "Approval secrets reach approvers only").
 *
 * Each approver of a pending action holds a grant: a short single-use code
 * people type, stored only as a keyed digest, and legacy approve/deny tokens
 * that name the grant and are HMAC-signed, so nothing of them is stored at all.
 * Both are bound to one action and one approver.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { newCrockfordCode } from "../platform/ids.js"

export const APPROVAL_CODE_LENGTH = 10

export const newApprovalCode = (): string => newCrockfordCode(APPROVAL_CODE_LENGTH)

/**
 * Codes are typed by people: case, dashes and spaces do not matter, and the
 * letters Crockford base32 leaves out read as the digits they resemble.
 */
export const normalizeApprovalCode = (code: string): string =>
  code
    .toUpperCase()
    .replace(/[\s-]/g, "")
    .replace(/[IL]/g, "1")
    .replace(/O/g, "0")

/** Keyed digest of a code; the "code" label keeps it apart from token MACs made with the same key. */
export const approvalCodeDigest = (key: Uint8Array, code: string): string =>
  createHmac("sha256", key).update(`code\n${normalizeApprovalCode(code)}`).digest("hex")

export type TokenDecision = "approve" | "deny"

const tokenMac = (key: Uint8Array, actionUuid: string, grantId: string, decision: TokenDecision, expiresAtSeconds: number) =>
  createHmac("sha256", key).update(`${decision}\n${actionUuid}\n${grantId}\n${expiresAtSeconds}`).digest("base64url")

/** `<grant id>.<expiry seconds>.<base64url HMAC>`: one action, one approver, one decision, one expiry. */
export const signApprovalToken = (key: Uint8Array, actionUuid: string, grantId: string, decision: TokenDecision, expiresAt: Date): string => {
  const seconds = Math.floor(expiresAt.getTime() / 1000)
  return `${grantId}.${seconds}.${tokenMac(key, actionUuid, grantId, decision, seconds)}`
}

export type TokenCheck =
  | { readonly result: "invalid" }
  | { readonly result: "valid" | "expired"; readonly grantId: string }

export const checkApprovalToken = (
  key: Uint8Array,
  actionUuid: string,
  decision: TokenDecision,
  token: string | undefined,
  now: Date = new Date()
): TokenCheck => {
  const match = token === undefined ? null : /^(apg_[a-z0-9]{24})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token)
  if (match === null) return { result: "invalid" }
  const grantId = match[1]!
  const seconds = Number(match[2])
  const expected = Buffer.from(tokenMac(key, actionUuid, grantId, decision, seconds))
  const given = Buffer.from(match[3]!)
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { result: "invalid" }
  return { result: seconds * 1000 < now.getTime() ? "expired" : "valid", grantId }
}

export interface Member {
  readonly user_uuid: string
  readonly email: string
  readonly role: string
}


const lowerUnique = (list: ReadonlyArray<string>) => [...new Set(list.map((email) => email.toLowerCase()))]

/**
 * Addresses people vouched for: members and default approvers (set by people,
 * never by an agent's key). Only they may receive approval codes: an agent
 * naming its own address as approver would otherwise approve itself.
 */
export const vouchedAddresses = (defaults: ReadonlyArray<string>, members: ReadonlyArray<{ readonly email: string }>): ReadonlySet<string> =>
  new Set(lowerUnique([...defaults, ...members.map((member) => member.email)]))

/** What an action records about who may decide on it. */
export interface ApprovalSubject {
  readonly approvers: ReadonlyArray<string> | null
  readonly approval_by_policy: boolean
  readonly authorized_by: string | null
}

/**
 * Four eyes (CONTRACT.md): the member whose credential authorized the action, when a member did.
 * Owners and admins are not excluded: they could change the policy anyway.
 */
export const authorizingMember = (action: ApprovalSubject, members: ReadonlyArray<Member>): Member | undefined =>
  action.authorized_by === null ? undefined : members.find((member) => member.user_uuid === action.authorized_by && member.role === "member")

/**
 * The addresses that decide on the action (besides owners and admins) and receive its codes: the
 * organization's approvers (default approvers, else admins and owner) joined by the vouched ones
 * the request named when a policy demanded the approval; when only the request asked for it, the
 * named ones instead (the organization's when none is vouched). Never the authorizing member.
 */
export const actionApprovers = (action: ApprovalSubject, defaults: ReadonlyArray<string>, members: ReadonlyArray<Member>): ReadonlyArray<string> => {
  const vouched = vouchedAddresses(defaults, members)
  const self = authorizingMember(action, members)?.email.toLowerCase()
  const eligible = (list: ReadonlyArray<string>) => lowerUnique(list).filter((email) => email !== self)
  const named = eligible(action.approvers ?? []).filter((email) => vouched.has(email))
  const fromDefaults = eligible(defaults)
  const organization = fromDefaults.length > 0 ? fromDefaults : eligible(members.filter((member) => member.role === "owner" || member.role === "admin").map((member) => member.email))
  if (action.approval_by_policy) return lowerUnique([...organization, ...named])
  return named.length > 0 ? named : organization
}

/** The dashboard page of an action (needs sign-in): where every notification points. */
export const reviewUrl = (baseUrl: string, actionUuid: string): string => `${baseUrl}/dashboard/actions/${actionUuid}`

/** The notification item of a pending approval (list and live channel alike). */
export const approvalNotificationItem = (
  pending: { readonly action_uuid: string; readonly action_type: string; readonly agent_id: string | null; readonly created_at: string },
  read: boolean
) => ({
  id: pending.action_uuid,
  type: "action_approval" as const,
  notification_key: `action:${pending.action_uuid}`,
  title: `Approval needed: ${pending.action_type}`,
  description: pending.agent_id ? `Agent ${pending.agent_id} requests ${pending.action_type}` : `An agent requests ${pending.action_type}`,
  href: `/dashboard/actions/${pending.action_uuid}`,
  created_at: pending.created_at,
  read
})
