/**
 * Accounts: registration, login, invites, members and roles, keys, ownership,
 * leaving and deleting an organization. Security events go to the audit log.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { CreatedKey, KeyInfo, LoginResponse, Member, RegisterResponse } from "../../protocol/accounts.js"
import type { Principal, Role } from "../../protocol/auth.js"
import { listPage, type Page, type Pagination } from "../../protocol/common.js"
import {
  decoyPasswordHash,
  digestsEqual,
  generateApiKey,
  hashPassword,
  inviteDigest,
  issueJwt,
  JWT_LIFETIME_SECONDS,
  keyDigest,
  verifyPassword
} from "../access/credentials.js"
import { isAdmin } from "../access/guards.js"
import { Access } from "../access/service.js"
import type { KeyRow, UserRow } from "../access/store.js"
import { Config } from "../platform/config.js"
import { InvalidInput } from "../platform/domain-error.js"
import { newCrockfordCode, newId, newUuid } from "../platform/ids.js"
import { Secrets } from "../platform/secrets.js"
import { Sso } from "../sso/service.js"
import {
  type AccountsError,
  EmailTaken,
  InvalidCredentials,
  InviteNotFound,
  KeyNotFound,
  MemberNotFound,
  NotKeyCreator,
  OrganizationNotFound,
  OwnerLeaving,
  OwnerOnly,
  OwnerRoleChange,
  refuse,
  ScopesBeyondKey,
  SsoRequired,
  TargetNotAdmin
} from "./errors.js"
import { makeAccountsStore } from "./store.js"

const INVITE_LIFETIME_MS = 7 * 24 * 3600 * 1000

const slugify = (name: string) =>
  `${name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 40) || "org"}-${newCrockfordCode(6).toLowerCase()}`

const keyView = (key: KeyRow): KeyInfo => ({
  id: key.id,
  name: key.name,
  key_prefix: key.key_prefix,
  scopes: [...key.scopes],
  last_used_at: key.last_used_at,
  expires_at: key.expires_at,
  revoked_at: key.revoked_at,
  created_at: key.created_at
})

const memberView = (user: UserRow): Member => ({
  user_uuid: user.user_uuid,
  email: user.email,
  name: user.name,
  role: user.role,
  created_at: user.created_at
})


export interface AuditContext {
  readonly requestId: string
}

export const makeAccounts = Effect.gen(function* () {
  const config = yield* Config
  const secrets = yield* Secrets
  const access = yield* Access
  const sso = yield* Sso
  const store = yield* makeAccountsStore
  const sql = store.sql

  const mintKey = (orgUuid: string, userUuid: string, name: string, scopes: ReadonlyArray<string>, expiresAt: string | null) =>
    Effect.gen(function* () {
      const { key, prefix } = generateApiKey()
      const digest = keyDigest(secrets, key)
      const row = yield* store.createKey({ id: newId("key"), orgUuid, userUuid, name, prefix, digest, scopes, expiresAt })
      // No node may still remember this digest as unknown (only a guess of the key could have put it there).
      yield* access.invalidate({ keyDigest: digest })
      const created: CreatedKey = { id: row.id, name: row.name, key, key_prefix: row.key_prefix, scopes: [...row.scopes], expires_at: row.expires_at, created_at: row.created_at }
      return created
    })

  /** Hashes and wipes invite codes stored in plain text (rows from before 0009, or from a node not yet upgraded). */
  const sealPlaintextInvites = Effect.gen(function* () {
    for (const code of yield* store.plaintextInviteCodes) yield* store.sealInvite(code, inviteDigest(secrets, code))
  })
  yield* sealPlaintextInvites

  const acceptInvite = (code: string, email: string) =>
    Effect.gen(function* () {
      const codeHash = inviteDigest(secrets, code)
      const invite = yield* store.acceptInvite(codeHash, email)
      return invite !== undefined && digestsEqual(invite.codeHash, codeHash) ? invite : undefined
    })

  // Usage is written in batches every few seconds; this node's newer, unwritten value wins.
  const withPendingUse = (key: KeyRow): KeyRow => {
    const pending = access.pendingUse(key.id)
    return pending !== undefined && (key.last_used_at === null || Date.parse(pending) > Date.parse(key.last_used_at))
      ? { ...key, last_used_at: pending }
      : key
  }

  const token = (user: { user_uuid: string; org_uuid: string; role: Role; email: string }) =>
    Effect.promise(() => issueJwt(secrets, { userUuid: user.user_uuid, orgUuid: user.org_uuid, role: user.role, email: user.email }))

  const register = Effect.fn("Accounts.register")(function* (input: RegisterInput, audit: AuditContext) {
    if (input.invite_code === undefined && (input.org_name === undefined || input.org_name.trim() === "")) {
      return yield* refuse(InvalidInput.one("org_name", "org_name is required unless invite_code is given"))
    }
    // Outside the transaction below, so a failed registration does not put plaintext codes back.
    if (input.invite_code !== undefined) yield* sealPlaintextInvites
    const passwordHash = yield* Effect.promise(() => hashPassword(input.password))
    const userUuid = newUuid()
    const result = yield* sql
      .withTransaction(
        Effect.gen(function* () {
          let orgUuid: string
          let role: Role
          if (input.invite_code !== undefined) {
            const invite = yield* acceptInvite(input.invite_code, input.email)
            if (invite === undefined) return yield* refuse(new InviteNotFound({}))
            orgUuid = invite.orgUuid
            role = invite.role
          } else {
            orgUuid = newUuid()
            role = "owner"
            yield* store.createOrganization({
              orgUuid,
              name: input.org_name!.trim(),
              slug: slugify(input.org_name!),
              plan: config.deploymentMode === "selfhosted" ? "self_hosted" : "starter"
            })
          }
          // Failing here rolls the organization and the accepted invite back.
          const created = yield* store.createUser({ userUuid, orgUuid, email: input.email, name: input.name ?? null, passwordHash, role })
          if (!created) return yield* refuse(new EmailTaken({}))
          const apiKey = yield* mintKey(orgUuid, userUuid, "Default key", ["*"], null)
          yield* store.audit({ orgUuid, actor: input.email, event: "user.registered", target: userUuid, details: { role }, requestId: audit.requestId })
          yield* store.audit({ orgUuid, actor: input.email, event: "api_key.created", target: apiKey.id, details: { scopes: ["*"] }, requestId: audit.requestId })
          return { orgUuid, role, apiKey }
        })
      )
      // What remains is the transaction's own BEGIN/COMMIT failing.
      .pipe(Effect.catchTag("SqlError", Effect.die))
    const jwt = yield* token({ user_uuid: userUuid, org_uuid: result.orgUuid, role: result.role, email: input.email })
    return {
      user_uuid: userUuid,
      org_uuid: result.orgUuid,
      role: result.role,
      token: jwt,
      expires_in: JWT_LIFETIME_SECONDS,
      api_key: result.apiKey
    }
  })

  const login = Effect.fn("Accounts.login")(function* (input: { email: string; password: string }) {
    const user = yield* store.activeUserByEmail(input.email)
    const hash = user?.password_hash ?? (yield* Effect.promise(() => decoyPasswordHash))
    const ok = yield* Effect.promise(() => verifyPassword(input.password, hash))
    // Checked whatever the password, so an enforced user learns to use SSO rather than retry passwords.
    // The owner keeps password login: a broken identity provider must not lock the organization out.
    if (user && user.role !== "owner" && (yield* sso.passwordLoginClosed(user.org_uuid, user.email))) return yield* refuse(new SsoRequired({}))
    if (!user || !ok) return yield* refuse(new InvalidCredentials({}))
    const jwt = yield* token(user)
    return { token: jwt, expires_in: JWT_LIFETIME_SECONDS, org_uuid: user.org_uuid, user_uuid: user.user_uuid, role: user.role }
  })

  const invite = Effect.fn("Accounts.invite")(function* (principal: Principal, input: { email: string; role: "admin" | "member" }, audit: AuditContext) {
    const code = newCrockfordCode(16)
    const expiresAt = new Date((yield* Clock.currentTimeMillis) + INVITE_LIFETIME_MS).toISOString()
    yield* store.createInvite({ codeHash: inviteDigest(secrets, code), orgUuid: principal.orgUuid, email: input.email, role: input.role, createdBy: principal.userUuid, expiresAt })
    yield* store.audit({ orgUuid: principal.orgUuid, actor: principal.email, event: "invite.created", target: input.email, details: { role: input.role }, requestId: audit.requestId })
    return { invite_code: code, email: input.email, role: input.role, expires_at: expiresAt }
  })

  const members = Effect.fn("Accounts.members")(function* (principal: Principal, page: number, perPage: number) {
    const [rows, total] = yield* store.members(principal.orgUuid, page, perPage)
    return listPage(rows.map(memberView), { page, perPage, total }, "members")
  })

  const defaultApprovers = Effect.fn("Accounts.defaultApprovers")(function* (principal: Principal) {
    const org = yield* store.organization(principal.orgUuid)
    const emails = org?.default_approvers ?? []
    return { emails, default_approvers: emails }
  })

  const setDefaultApprovers = Effect.fn("Accounts.setDefaultApprovers")(function* (principal: Principal, emails: ReadonlyArray<string>, audit: AuditContext) {
    const unique = [...new Set(emails.map((email) => email.toLowerCase()))]
    yield* store.setDefaultApprovers(principal.orgUuid, unique)
    yield* store.audit({ orgUuid: principal.orgUuid, actor: principal.email, event: "default_approvers.set", details: { emails: unique }, requestId: audit.requestId })
    return { emails: unique, default_approvers: unique }
  })

  const setRole = Effect.fn("Accounts.setRole")(function* (principal: Principal, userUuid: string, role: "admin" | "member", audit: AuditContext) {
    const target = yield* store.userInOrg(principal.orgUuid, userUuid)
    if (!target) return yield* refuse(new MemberNotFound({}))
    if (target.role === "owner") return yield* refuse(new OwnerRoleChange({}))
    const updated = yield* store.setRole(principal.orgUuid, userUuid, role)
    // Deactivated between the two statements.
    if (!updated) return yield* refuse(new MemberNotFound({}))
    yield* store.audit({ orgUuid: principal.orgUuid, actor: principal.email, event: "member.role_changed", target: userUuid, details: { from: target.role, to: role }, requestId: audit.requestId })
    yield* access.invalidate({ userUuid })
    return memberView(updated)
  })

  const transferOwnership = Effect.fn("Accounts.transferOwnership")(function* (principal: Principal, targetUserId: string, audit: AuditContext) {
    if (principal.role !== "owner") return yield* refuse(OwnerOnly.of("transfer ownership"))
    const target = yield* store.userInOrg(principal.orgUuid, targetUserId)
    if (!target || target.user_uuid === principal.userUuid) return yield* refuse(new MemberNotFound({}))
    if (target.role !== "admin") return yield* refuse(new TargetNotAdmin({}))
    yield* store.transferOwnership(principal.orgUuid, principal.userUuid, target.user_uuid, {
      orgUuid: principal.orgUuid,
      actor: principal.email,
      event: "ownership.transferred",
      target: target.user_uuid,
      details: { from: principal.userUuid },
      requestId: audit.requestId
    })
    yield* access.invalidate({ userUuid: principal.userUuid })
    yield* access.invalidate({ userUuid: target.user_uuid })
    return { org_uuid: principal.orgUuid, previous_owner: principal.userUuid, new_owner: target.user_uuid }
  })

  const leave = Effect.fn("Accounts.leave")(function* (principal: Principal, audit: AuditContext) {
    if (principal.role === "owner") return yield* refuse(new OwnerLeaving({}))
    yield* store.anonymizeAndDeactivate(principal.userUuid, {
      orgUuid: principal.orgUuid,
      actor: principal.userUuid,
      event: "member.left",
      target: principal.userUuid,
      requestId: audit.requestId
    })
    yield* access.invalidate({ userUuid: principal.userUuid })
    return { left: true, user_uuid: principal.userUuid, org_uuid: principal.orgUuid }
  })

  const deleteOrganization = Effect.fn("Accounts.deleteOrganization")(function* (principal: Principal, audit: AuditContext) {
    if (principal.role !== "owner") return yield* refuse(OwnerOnly.of("delete the organization"))
    // The audit entry is kept outside the organization (org_uuid null) so the platform can show the deletion happened.
    yield* store.deleteOrganization(principal.orgUuid, {
      orgUuid: null,
      actor: principal.userUuid,
      event: "organization.deleted",
      target: principal.orgUuid,
      requestId: audit.requestId
    })
    yield* access.invalidate({ orgUuid: principal.orgUuid })
    return { deleted: true, org_uuid: principal.orgUuid }
  })

  const createKey = Effect.fn("Accounts.createKey")(function* (principal: Principal, input: CreateKeyInput, audit: AuditContext) {
    let expiresAt: string | null = null
    if (input.expires_at !== undefined && input.expires_at !== null) {
      const at = Date.parse(input.expires_at)
      if (Number.isNaN(at)) return yield* refuse(InvalidInput.one("expires_at", "must be an ISO 8601 timestamp"))
      if (at <= (yield* Clock.currentTimeMillis)) return yield* refuse(InvalidInput.one("expires_at", "must be in the future"))
      expiresAt = new Date(at).toISOString()
    }
    // A key can never hold more than the key that created it.
    const scopes = input.scopes ? [...new Set(input.scopes)] : principal.kind === "api_key" ? [...principal.scopes] : ["*"]
    if (principal.kind === "api_key" && !principal.scopes.includes("*")) {
      const beyond = scopes.filter((scope) => !principal.scopes.includes(scope))
      if (beyond.length > 0) return yield* refuse(ScopesBeyondKey.of(beyond))
    }
    const created = yield* mintKey(principal.orgUuid, principal.userUuid, input.name, scopes, expiresAt)
    yield* store.audit({ orgUuid: principal.orgUuid, actor: principal.email, event: "api_key.created", target: created.id, details: { scopes }, requestId: audit.requestId })
    return created
  })

  const listKeys = Effect.fn("Accounts.listKeys")(function* (principal: Principal, page: number, perPage: number) {
    const [rows, total] = yield* store.keys(principal.orgUuid, page, perPage)
    return listPage(rows.map((row) => keyView(withPendingUse(row))), { page, perPage, total })
  })

  const revokeKey = Effect.fn("Accounts.revokeKey")(function* (principal: Principal, keyId: string, audit: AuditContext) {
    const key = yield* store.keyInOrg(principal.orgUuid, keyId)
    if (!key) return yield* refuse(new KeyNotFound({}))
    // Otherwise any member could cut off the owner's and admins' integrations.
    if (!isAdmin(principal) && key.user_uuid !== principal.userUuid) {
      return yield* refuse(new NotKeyCreator({}))
    }
    const revoked = yield* store.revokeKey(principal.orgUuid, keyId)
    if (!revoked) return yield* refuse(new KeyNotFound({}))
    yield* access.invalidate({ keyDigest: revoked.digest, keyId: revoked.id })
    yield* store.audit({ orgUuid: principal.orgUuid, actor: principal.email, event: "api_key.revoked", target: keyId, requestId: audit.requestId })
    return { id: revoked.id, revoked_at: revoked.revoked_at }
  })

  const setPlan = Effect.fn("Accounts.setPlan")(function* (orgUuid: string, plan: string, audit: AuditContext) {
    const found = yield* store.setPlan(orgUuid, plan)
    if (!found) return yield* refuse(new OrganizationNotFound({}))
    yield* store.audit({ orgUuid, actor: "platform-admin", event: "plan.changed", target: orgUuid, details: { plan }, requestId: audit.requestId })
    return { org_uuid: orgUuid, plan }
  })

  const organization = Effect.fn("Accounts.organization")(function* (orgUuid: string) {
    return yield* store.organization(orgUuid)
  })

  return Accounts.of({
    register,
    login,
    invite,
    members,
    defaultApprovers,
    setDefaultApprovers,
    setRole,
    transferOwnership,
    leave,
    deleteOrganization,
    createKey,
    listKeys,
    revokeKey,
    setPlan,
    organization
  })
})

export interface RegisterInput {
  readonly email: string
  readonly password: string
  readonly org_name?: string
  readonly name?: string
  readonly invite_code?: string
}

export interface CreateKeyInput {
  readonly name: string
  readonly scopes?: ReadonlyArray<string>
  readonly expires_at?: string | null
}

export interface Invite {
  readonly invite_code: string
  readonly email: string
  readonly role: "admin" | "member"
  readonly expires_at: string
}

export interface DefaultApprovers {
  readonly emails: ReadonlyArray<string>
  readonly default_approvers: ReadonlyArray<string>
}

export interface Organization {
  readonly org_uuid: string
  readonly name: string
  readonly slug: string
  readonly plan: string
  readonly default_approvers: ReadonlyArray<string>
  readonly created_at: string
}

export interface AccountsService {
  readonly register: (input: RegisterInput, audit: AuditContext) => Effect.Effect<RegisterResponse, AccountsError>
  readonly login: (input: { email: string; password: string }) => Effect.Effect<LoginResponse, AccountsError>
  readonly invite: (principal: Principal, input: { email: string; role: "admin" | "member" }, audit: AuditContext) => Effect.Effect<Invite>
  readonly members: (
    principal: Principal,
    page: number,
    perPage: number
  ) => Effect.Effect<{ readonly data: ReadonlyArray<Member>; readonly members: ReadonlyArray<Member>; readonly pagination: Pagination }>
  readonly defaultApprovers: (principal: Principal) => Effect.Effect<DefaultApprovers>
  readonly setDefaultApprovers: (principal: Principal, emails: ReadonlyArray<string>, audit: AuditContext) => Effect.Effect<DefaultApprovers>
  readonly setRole: (principal: Principal, userUuid: string, role: "admin" | "member", audit: AuditContext) => Effect.Effect<Member, AccountsError>
  readonly transferOwnership: (
    principal: Principal,
    targetUserId: string,
    audit: AuditContext
  ) => Effect.Effect<{ readonly org_uuid: string; readonly previous_owner: string; readonly new_owner: string }, AccountsError>
  /** Leaving: personal data replaced, keys revoked; the owner must hand ownership over first. */
  readonly leave: (principal: Principal, audit: AuditContext) => Effect.Effect<{ readonly left: boolean; readonly user_uuid: string; readonly org_uuid: string }, AccountsError>
  readonly deleteOrganization: (principal: Principal, audit: AuditContext) => Effect.Effect<{ readonly deleted: boolean; readonly org_uuid: string }, AccountsError>
  readonly createKey: (principal: Principal, input: CreateKeyInput, audit: AuditContext) => Effect.Effect<CreatedKey, AccountsError>
  readonly listKeys: (principal: Principal, page: number, perPage: number) => Effect.Effect<Page<KeyInfo>>
  readonly revokeKey: (principal: Principal, keyId: string, audit: AuditContext) => Effect.Effect<{ readonly id: string; readonly revoked_at: string }, AccountsError>
  readonly setPlan: (orgUuid: string, plan: string, audit: AuditContext) => Effect.Effect<{ readonly org_uuid: string; readonly plan: string }, AccountsError>
  readonly organization: (orgUuid: string) => Effect.Effect<Organization | undefined>
}

export class Accounts extends Context.Service<Accounts, AccountsService>()("gateway/Accounts") {
  static readonly layer = Layer.effect(Accounts)(makeAccounts)
}
