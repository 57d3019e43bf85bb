/**
 * Accounts, users, teams, API keys and plans (CONTRACT.md "Accounts, users, roles").
 */

import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated, PublicRoute } from "./auth.js"
import { NullableTimestamp, PageQuery, Pagination, Timestamp } from "./common.js"
import { accessRefusal, Forbidden, InvalidInput, refusal } from "./errors.js"

export const Roles = ["owner", "admin", "member"] as const
export const Plans = ["starter", "pro", "business", "enterprise", "self_hosted"] as const

const Email = Schema.String.check(Schema.isPattern(/^[^\s@]{1,64}@[^\s@]{1,255}$/)).annotate({ description: "e-mail address" })
const Password = Schema.String.check(Schema.isMinLength(12), Schema.isMaxLength(1024)).annotate({ description: "at least 12 characters" })
const Scope = Schema.String.check(Schema.isPattern(/^(\*|[a-z_]+:(read|write|\*))$/)).annotate({
  description: "`*` or `<area>:read|write`, e.g. `actions:write`, `receipts:read`"
})

export const CreatedKey = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  key: Schema.String.annotate({ description: "the full key; shown only in this response" }),
  key_prefix: Schema.String,
  scopes: Schema.Array(Schema.String),
  expires_at: NullableTimestamp,
  created_at: Timestamp
})
export type CreatedKey = typeof CreatedKey.Type

export const KeyInfo = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  key_prefix: Schema.String,
  scopes: Schema.Array(Schema.String),
  last_used_at: NullableTimestamp,
  expires_at: NullableTimestamp,
  revoked_at: NullableTimestamp,
  created_at: Timestamp
})
export type KeyInfo = typeof KeyInfo.Type

export const RegisterRequest = Schema.Struct({
  email: Email,
  password: Password,
  org_name: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))),
  name: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(200))),
  invite_code: Schema.optionalKey(Schema.String)
})

export const RegisterResponse = Schema.Struct({
  user_uuid: Schema.String,
  org_uuid: Schema.String,
  role: Schema.Literals(Roles),
  token: Schema.String,
  expires_in: Schema.Int,
  api_key: CreatedKey
})
export type RegisterResponse = typeof RegisterResponse.Type

export const LoginResponse = Schema.Struct({
  token: Schema.String,
  expires_in: Schema.Int,
  org_uuid: Schema.String,
  user_uuid: Schema.String,
  role: Schema.Literals(Roles)
})
export type LoginResponse = typeof LoginResponse.Type

export const Member = Schema.Struct({
  user_uuid: Schema.String,
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  role: Schema.Literals(Roles),
  created_at: Timestamp
})
export type Member = typeof Member.Type

/* Refusals of the accounts area: each is the wire error its endpoints declare. */

export class EmailTaken extends Schema.Error<EmailTaken>("EmailTaken")(refusal("EMAIL_TAKEN", "An account with this e-mail already exists"), {
  httpApiStatus: 409,
  description: "An account with this e-mail already exists"
}) {
  readonly _tag = "EmailTaken"
}

export class InviteNotFound extends Schema.Error<InviteNotFound>("InviteNotFound")(
  refusal("NOT_FOUND", "Invite code is unknown, used, expired or for another address"),
  { httpApiStatus: 404, description: "Invite code unknown, used, expired or for another address" }
) {
  readonly _tag = "InviteNotFound"
}

export class InvalidCredentials extends Schema.Error<InvalidCredentials>("InvalidCredentials")(
  accessRefusal("INVALID_CREDENTIALS", "Invalid e-mail or password"),
  { httpApiStatus: 401, description: "Wrong e-mail or password" }
) {
  readonly _tag = "InvalidCredentials"
}

/** The organization enforces single sign-on for this user's e-mail domain (issue 16; code chosen in docs/decisions.md). */
export class SsoRequired extends Schema.Error<SsoRequired>("SsoRequired")(
  accessRefusal("SSO_REQUIRED", "Your organization requires single sign-on: sign in through your identity provider"),
  { httpApiStatus: 403, description: "The organization enforces single sign-on for this e-mail domain" }
) {
  readonly _tag = "SsoRequired"
}

export class MemberNotFound extends Schema.Error<MemberNotFound>("MemberNotFound")(refusal("NOT_FOUND", "Member not found"), {
  httpApiStatus: 404,
  description: "No such active member in the caller's organization"
}) {
  readonly _tag = "MemberNotFound"
}

/** The owner's role changes only by handing ownership over. */
export class OwnerRoleChange extends Schema.Error<OwnerRoleChange>("OwnerRoleChange")(
  refusal("OWNER_MUST_TRANSFER", "The owner's role changes only through transfer-ownership"),
  { httpApiStatus: 409, description: "The owner's role changes only through transfer-ownership" }
) {
  readonly _tag = "OwnerRoleChange"
}

export class OwnerLeaving extends Schema.Error<OwnerLeaving>("OwnerLeaving")(
  refusal("OWNER_MUST_TRANSFER", "The owner must transfer ownership before leaving"),
  { httpApiStatus: 409, description: "The owner must transfer ownership before leaving" }
) {
  readonly _tag = "OwnerLeaving"
}

export class OwnerOnly extends Schema.Error<OwnerOnly>("OwnerOnly")(accessRefusal("FORBIDDEN", "Only the owner can do this"), {
  httpApiStatus: 403,
  description: "Only the organization's owner may do this"
}) {
  readonly _tag = "OwnerOnly"
  /** `action` completes "Only the owner can ...". */
  static of(action: string) {
    const message = `Only the owner can ${action}`
    return new OwnerOnly({ message, error: message })
  }
}

export class TargetNotAdmin extends Schema.Error<TargetNotAdmin>("TargetNotAdmin")(
  refusal("TARGET_NOT_ADMIN", "Ownership can only be transferred to an admin"),
  { httpApiStatus: 422, description: "Ownership can only be transferred to an admin" }
) {
  readonly _tag = "TargetNotAdmin"
}

export class ScopesBeyondKey extends Schema.Error<ScopesBeyondKey>("ScopesBeyondKey")(
  accessRefusal("FORBIDDEN", "A key cannot grant scopes it does not hold"),
  { httpApiStatus: 403, description: "A key cannot grant scopes it does not hold" }
) {
  readonly _tag = "ScopesBeyondKey"
  static of(scopes: ReadonlyArray<string>) {
    const message = `A key cannot grant scopes it does not hold: ${scopes.join(", ")}`
    return new ScopesBeyondKey({ message, error: message })
  }
}

export class KeyNotFound extends Schema.Error<KeyNotFound>("KeyNotFound")(refusal("NOT_FOUND", "API key not found"), {
  httpApiStatus: 404,
  description: "No such API key in the caller's organization"
}) {
  readonly _tag = "KeyNotFound"
}

export class NotKeyCreator extends Schema.Error<NotKeyCreator>("NotKeyCreator")(accessRefusal("FORBIDDEN", "Members can revoke only keys they created"), {
  httpApiStatus: 403,
  description: "Members can revoke only keys they created"
}) {
  readonly _tag = "NotKeyCreator"
}

export class OrganizationNotFound extends Schema.Error<OrganizationNotFound>("OrganizationNotFound")(
  refusal("NOT_FOUND", "Organization not found"),
  { httpApiStatus: 404, description: "No such organization" }
) {
  readonly _tag = "OrganizationNotFound"
}

export class AuthGroup extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("register", "/api/v1/auth/register", { error: [InvalidInput, InviteNotFound, EmailTaken],
      payload: RegisterRequest,
      success: RegisterResponse.pipe(HttpApiSchema.status(201))
    }).middleware(PublicRoute),
    HttpApiEndpoint.post("login", "/api/v1/auth/login", { error: [InvalidCredentials, SsoRequired],
      payload: Schema.Struct({ email: Schema.String, password: Schema.String }),
      success: LoginResponse
    }).middleware(PublicRoute),
    HttpApiEndpoint.get("whoami", "/api/v1/auth/whoami", {
      success: Schema.Struct({
        kind: Schema.Literals(["api_key", "jwt"]),
        org_uuid: Schema.String,
        user_uuid: Schema.String,
        email: Schema.String,
        role: Schema.Literals(Roles),
        scopes: Schema.Array(Schema.String),
        key_id: Schema.NullOr(Schema.String)
      })
    }).middleware(Authenticated),
    HttpApiEndpoint.post("leaveOrg", "/api/v1/auth/leave-org", { error: OwnerLeaving,
      success: Schema.Struct({ left: Schema.Boolean, user_uuid: Schema.String, org_uuid: Schema.String })
    }).middleware(Authenticated),
    HttpApiEndpoint.delete("deleteAccount", "/api/v1/auth/account", { error: OwnerOnly,
      success: Schema.Struct({ deleted: Schema.Boolean, org_uuid: Schema.String })
    }).middleware(Authenticated)
  )
  .annotateMerge(
    OpenApi.annotations({
      title: "Accounts",
      description: "Registration, login (EdDSA JWTs, 24 h), leaving an organization and deleting it. Account endpoints need a JWT."
    })
  )
{}

export class TeamGroup extends HttpApiGroup.make("team")
  .add(
    HttpApiEndpoint.post("invite", "/api/v1/team/invites", { error: Forbidden,
      payload: Schema.Struct({ email: Email, role: Schema.Literals(["admin", "member"]) }),
      success: Schema.Struct({
        invite_code: Schema.String,
        email: Schema.String,
        role: Schema.String,
        expires_at: Timestamp
      }).pipe(HttpApiSchema.status(201))
    }),
    HttpApiEndpoint.get("members", "/api/v1/team/members", { error: Forbidden,
      query: PageQuery,
      success: Schema.Struct({ data: Schema.Array(Member), members: Schema.Array(Member), pagination: Pagination })
    }),
    HttpApiEndpoint.get("defaultApprovers", "/api/v1/team/default-approvers", { error: Forbidden,
      success: Schema.Struct({ emails: Schema.Array(Schema.String), default_approvers: Schema.Array(Schema.String) })
    }),
    HttpApiEndpoint.put("setDefaultApprovers", "/api/v1/team/default-approvers", { error: Forbidden,
      payload: Schema.Struct({ emails: Schema.Array(Email).check(Schema.isMaxLength(100)) }),
      success: Schema.Struct({ emails: Schema.Array(Schema.String), default_approvers: Schema.Array(Schema.String) })
    }),
    HttpApiEndpoint.patch("setRole", "/api/v1/team/members/:user_uuid", { error: [Forbidden, MemberNotFound, OwnerRoleChange],
      params: { user_uuid: Schema.String },
      payload: Schema.Struct({ role: Schema.Literals(["admin", "member"]) }),
      success: Member
    }),
    HttpApiEndpoint.post("transferOwnership", "/api/v1/team/transfer-ownership", { error: [OwnerOnly, MemberNotFound, TargetNotAdmin],
      payload: Schema.Struct({ target_user_id: Schema.String }),
      success: Schema.Struct({ org_uuid: Schema.String, previous_owner: Schema.String, new_owner: Schema.String })
    })
  )
  .middleware(Authenticated)
  .annotateMerge(OpenApi.annotations({ title: "Team", description: "Invites, members, roles and default approvers." }))
{}

export class ApiKeysGroup extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/api-keys", { error: [Forbidden, ScopesBeyondKey, InvalidInput],
      payload: Schema.Struct({
        name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100)),
        scopes: Schema.optionalKey(Schema.Array(Scope).check(Schema.isMinLength(1), Schema.isMaxLength(50))),
        expires_at: Schema.optionalKey(Schema.NullOr(Schema.String))
      }),
      success: CreatedKey.pipe(HttpApiSchema.status(201))
    }),
    HttpApiEndpoint.get("list", "/api/v1/api-keys", { error: Forbidden,
      query: PageQuery,
      success: Schema.Struct({ data: Schema.Array(KeyInfo), pagination: Pagination })
    }),
    HttpApiEndpoint.delete("revoke", "/api/v1/api-keys/:key_id", { error: [Forbidden, KeyNotFound, NotKeyCreator],
      params: { key_id: Schema.String },
      success: Schema.Struct({ id: Schema.String, revoked_at: Timestamp })
    })
  )
  .middleware(Authenticated)
  .annotateMerge(OpenApi.annotations({ title: "API keys", description: "Keys are `svc_live_` + base58; stored only as HMAC digests; shown once." }))
{}
