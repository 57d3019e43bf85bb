/** API keys, team and approval notification channels: the calls and shapes the settings pages use. */
import { request } from "./api.ts"

export interface KeyInfo {
  readonly id: string
  readonly name: string
  readonly key_prefix: string
  readonly scopes: ReadonlyArray<string>
  readonly last_used_at: string | null
  readonly expires_at: string | null
  readonly revoked_at: string | null
  readonly created_at: string
}

export interface CreatedKey {
  readonly id: string
  readonly name: string
  /** The full key: only in the creation answer. */
  readonly key: string
  readonly key_prefix: string
  readonly scopes: ReadonlyArray<string>
  readonly expires_at: string | null
  readonly created_at: string
}

export interface Member {
  readonly user_uuid: string
  readonly email: string
  readonly name: string | null
  readonly role: "owner" | "admin" | "member"
  readonly created_at: string
}

export interface Invite {
  readonly invite_code: string
  readonly email: string
  readonly role: string
  readonly expires_at: string
}

/** As the gateway answers: webhook URLs come back masked (or null when none is stored). */
export interface NotificationChannels {
  readonly email: { readonly enabled: boolean; readonly recipients: ReadonlyArray<string> }
  readonly slack: { readonly enabled: boolean; readonly webhook_url: string | null }
  readonly teams: { readonly enabled: boolean; readonly webhook_url: string | null }
}

export interface ChatInput {
  readonly enabled: boolean
  /** Omitted: keep the stored URL; null: remove it. */
  readonly webhook_url?: string | null
}

export interface NotificationChannelsInput {
  readonly email?: { readonly enabled: boolean; readonly recipients?: ReadonlyArray<string> }
  readonly slack?: ChatInput
  readonly teams?: ChatInput
}

/** Areas with `<area>:read|write` scopes the gateway checks (CONTRACT.md "Access"). */
export { ScopeAreas as SCOPE_AREAS } from "../../protocol/lists.ts"

export const EMAIL_PATTERN = /^[^\s@]{1,64}@[^\s@]{1,255}$/

const id = encodeURIComponent

export const listKeys = (token: string) => request<{ data: ReadonlyArray<KeyInfo> }>("GET", "/api/v1/api-keys?page=1&per_page=100", token)

export const createKey = (token: string, input: { name: string; scopes: ReadonlyArray<string>; expires_at?: string }) =>
  request<CreatedKey>("POST", "/api/v1/api-keys", token, input)

export const revokeKey = (token: string, keyId: string) => request<{ id: string; revoked_at: string }>("DELETE", `/api/v1/api-keys/${id(keyId)}`, token)

export const listMembers = (token: string) => request<{ data: ReadonlyArray<Member> }>("GET", "/api/v1/team/members?page=1&per_page=100", token)

export const invite = (token: string, email: string, role: "admin" | "member") => request<Invite>("POST", "/api/v1/team/invites", token, { email, role })

export const setRole = (token: string, userUuid: string, role: "admin" | "member") => request<Member>("PATCH", `/api/v1/team/members/${id(userUuid)}`, token, { role })

export const getDefaultApprovers = (token: string) => request<{ emails: ReadonlyArray<string> }>("GET", "/api/v1/team/default-approvers", token)

export const setDefaultApprovers = (token: string, emails: ReadonlyArray<string>) => request<{ emails: ReadonlyArray<string> }>("PUT", "/api/v1/team/default-approvers", token, { emails })

export const getChannels = (token: string) => request<NotificationChannels>("GET", "/api/v1/approvers/notification-channels", token)

export const putChannels = (token: string, input: NotificationChannelsInput) => request<NotificationChannels>("PUT", "/api/v1/approvers/notification-channels", token, input)
