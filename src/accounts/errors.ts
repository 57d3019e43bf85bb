/** Why an accounts operation (registration, login, team, keys, plans) was refused. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

export class EmailTaken extends Schema.TaggedError<EmailTaken>()("EmailTaken", {}) {
  readonly code = "EMAIL_TAKEN"
  override readonly message = "An account with this e-mail already exists"
}

export class InviteNotFound extends Schema.TaggedError<InviteNotFound>()("InviteNotFound", {}) {
  readonly code = "NOT_FOUND"
  override readonly message = "Invite code is unknown, used, expired or for another address"
}

export class InvalidCredentials extends Schema.TaggedError<InvalidCredentials>()("InvalidCredentials", {}) {
  readonly code = "INVALID_CREDENTIALS"
  override readonly message = "Invalid e-mail or password"
}

/** The organization enforces single sign-on for this user's e-mail domain (issue 16; code chosen in docs/decisions.md). */
export class SsoRequired extends Schema.TaggedError<SsoRequired>()("SsoRequired", {}) {
  readonly code = "SSO_REQUIRED"
  override readonly message = "Your organization requires single sign-on: sign in through your identity provider"
}

export class MemberNotFound extends Schema.TaggedError<MemberNotFound>()("MemberNotFound", {}) {
  readonly code = "NOT_FOUND"
  override readonly message = "Member not found"
}

/** The owner's role changes only by handing ownership over. */
export class OwnerRoleChange extends Schema.TaggedError<OwnerRoleChange>()("OwnerRoleChange", {}) {
  readonly code = "OWNER_MUST_TRANSFER"
  override readonly message = "The owner's role changes only through transfer-ownership"
}

export class OwnerLeaving extends Schema.TaggedError<OwnerLeaving>()("OwnerLeaving", {}) {
  readonly code = "OWNER_MUST_TRANSFER"
  override readonly message = "The owner must transfer ownership before leaving"
}

/** `action` completes "Only the owner can ...". */
export class OwnerOnly extends Schema.TaggedError<OwnerOnly>()("OwnerOnly", { action: Schema.String }) {
  readonly code = "FORBIDDEN"
  override readonly message = `Only the owner can ${this.action}`
}

export class TargetNotAdmin extends Schema.TaggedError<TargetNotAdmin>()("TargetNotAdmin", {}) {
  readonly code = "TARGET_NOT_ADMIN"
  override readonly message = "Ownership can only be transferred to an admin"
}

export class ScopesBeyondKey extends Schema.TaggedError<ScopesBeyondKey>()("ScopesBeyondKey", { scopes: Schema.Array(Schema.String) }) {
  readonly code = "FORBIDDEN"
  override readonly message = `A key cannot grant scopes it does not hold: ${this.scopes.join(", ")}`
}

export class KeyNotFound extends Schema.TaggedError<KeyNotFound>()("KeyNotFound", {}) {
  readonly code = "NOT_FOUND"
  override readonly message = "API key not found"
}

export class NotKeyCreator extends Schema.TaggedError<NotKeyCreator>()("NotKeyCreator", {}) {
  readonly code = "FORBIDDEN"
  override readonly message = "Members can revoke only keys they created"
}

export class OrganizationNotFound extends Schema.TaggedError<OrganizationNotFound>()("OrganizationNotFound", {}) {
  readonly code = "NOT_FOUND"
  override readonly message = "Organization not found"
}

export class AccountsError extends Schema.TaggedError<AccountsError>()("AccountsError", {
  reason: Schema.Union([
    EmailTaken,
    InviteNotFound,
    InvalidCredentials,
    SsoRequired,
    MemberNotFound,
    OwnerRoleChange,
    OwnerLeaving,
    OwnerOnly,
    TargetNotAdmin,
    ScopesBeyondKey,
    KeyNotFound,
    NotKeyCreator,
    OrganizationNotFound,
    InvalidInput
  ])
}) {}

export const refuse = (reason: AccountsError["reason"]) => Effect.fail(new AccountsError({ reason }))
