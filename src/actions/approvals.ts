/**
 * Approval credentials: the short single-use code people type (stored only as
 * a digest) and the legacy HMAC-signed approve/deny tokens carried in URLs.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto"
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

export const approvalCodeHash = (code: string): string =>
  createHash("sha256").update(`approval-code:${normalizeApprovalCode(code)}`).digest("hex")

export type TokenDecision = "approve" | "deny"

const tokenMac = (key: Uint8Array, actionUuid: string, decision: TokenDecision, expiresAtSeconds: number) =>
  createHmac("sha256", key).update(`${decision}\n${actionUuid}\n${expiresAtSeconds}`).digest("base64url")

/** `<expiry seconds>.<base64url HMAC>`; bound to one action, one decision and its expiry. */
export const signApprovalToken = (key: Uint8Array, actionUuid: string, decision: TokenDecision, expiresAt: Date): string => {
  const seconds = Math.floor(expiresAt.getTime() / 1000)
  return `${seconds}.${tokenMac(key, actionUuid, decision, seconds)}`
}

export type TokenCheck = "valid" | "invalid" | "expired"

export const checkApprovalToken = (
  key: Uint8Array,
  actionUuid: string,
  decision: TokenDecision,
  token: string | undefined,
  now: Date = new Date()
): TokenCheck => {
  if (token === undefined || token === "") return "invalid"
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token)
  if (match === null) return "invalid"
  const seconds = Number(match[1])
  const expected = Buffer.from(tokenMac(key, actionUuid, decision, seconds))
  const given = Buffer.from(match[2]!)
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return "invalid"
  return seconds * 1000 < now.getTime() ? "expired" : "valid"
}

/** Who may approve from the dashboard: admins and owners always; otherwise the action's list, or the org's default list. */
export const mayApprove = (
  caller: { readonly role: string; readonly email: string },
  actionApprovers: ReadonlyArray<string> | null,
  defaultApprovers: ReadonlyArray<string>
): boolean => {
  if (caller.role === "owner" || caller.role === "admin") return true
  const list = actionApprovers ?? defaultApprovers
  const email = caller.email.toLowerCase()
  return list.some((entry) => entry.toLowerCase() === email)
}

/** The `action.approval_requested` event data: where approvers act. */
export interface ApprovalRequest {
  readonly action_uuid: string
  readonly action_type: string
  readonly agent_id: string | null
  readonly approval_url: string
  readonly approval_code: string
  readonly expires_at: string
  readonly approve_url: string
  readonly deny_url: string
}

/**
 * In-process observers of committed approval requests (an embedding process or
 * an end-to-end test running the server in process). Delivery to people goes
 * through the recorded event; observers only see what this process created.
 */
const approvalObservers = new Set<(request: ApprovalRequest & { readonly org_uuid: string }) => void>()

export const observeApprovalRequests = (observer: (request: ApprovalRequest & { readonly org_uuid: string }) => void): (() => void) => {
  approvalObservers.add(observer)
  return () => {
    approvalObservers.delete(observer)
  }
}

export const notifyApprovalObservers = (request: ApprovalRequest & { readonly org_uuid: string }): void => {
  for (const observer of approvalObservers) {
    try {
      observer(request)
    } catch {
      // An observer's failure must never affect the request that created the approval.
    }
  }
}
