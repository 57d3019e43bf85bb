/**
 * Accounts, users, teams, API keys and plans (CONTRACT.md "Accounts, users, roles").
 */

import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated, PublicRoute } from "./auth.js"
import { NullableTimestamp, PageQuery, Pagination, Timestamp } from "./common.js"
import { Conflict, Forbidden, NotFound, Unauthorized } from "./errors.js"

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

export const LoginResponse = Schema.Struct({
  token: Schema.String,
  expires_in: Schema.Int,
  org_uuid: Schema.String,
  user_uuid: Schema.String,
  role: Schema.Literals(Roles)
})

export const Member = Schema.Struct({
  user_uuid: Schema.String,
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  role: Schema.Literals(Roles),
  created_at: Timestamp
})

export class AuthGroup extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("register", "/api/v1/auth/register", { error: [NotFound, Conflict],
      payload: RegisterRequest,
      success: RegisterResponse.pipe(HttpApiSchema.status(201))
    }).middleware(PublicRoute),
    HttpApiEndpoint.post("login", "/api/v1/auth/login", { error: [Unauthorized, Forbidden],
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
    HttpApiEndpoint.post("leaveOrg", "/api/v1/auth/leave-org", { error: Conflict,
      success: Schema.Struct({ left: Schema.Boolean, user_uuid: Schema.String, org_uuid: Schema.String })
    }).middleware(Authenticated),
    HttpApiEndpoint.delete("deleteAccount", "/api/v1/auth/account", { error: Forbidden,
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
    HttpApiEndpoint.patch("setRole", "/api/v1/team/members/:user_uuid", { error: [Forbidden, NotFound, Conflict],
      params: { user_uuid: Schema.String },
      payload: Schema.Struct({ role: Schema.Literals(["admin", "member"]) }),
      success: Member
    }),
    HttpApiEndpoint.post("transferOwnership", "/api/v1/team/transfer-ownership", { error: [Forbidden, NotFound],
      payload: Schema.Struct({ target_user_id: Schema.String }),
      success: Schema.Struct({ org_uuid: Schema.String, previous_owner: Schema.String, new_owner: Schema.String })
    })
  )
  .middleware(Authenticated)
  .annotateMerge(OpenApi.annotations({ title: "Team", description: "Invites, members, roles and default approvers." }))
{}

export class ApiKeysGroup extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/api-keys", { error: Forbidden,
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
    HttpApiEndpoint.delete("revoke", "/api/v1/api-keys/:key_id", { error: [Forbidden, NotFound],
      params: { key_id: Schema.String },
      success: Schema.Struct({ id: Schema.String, revoked_at: Timestamp })
    })
  )
  .middleware(Authenticated)
  .annotateMerge(OpenApi.annotations({ title: "API keys", description: "Keys are `svc_live_` + base58; stored only as HMAC digests; shown once." }))
{}
