/** Handlers of the accounts groups: `/api/v1/auth/*`, `/api/v1/team/*`, and `/api/v1/api-keys*`. */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import * as Layer from "effect/Layer"
import { GatewayApi } from "../../protocol/api.js"
import { CurrentPrincipal } from "../../protocol/auth.js"
import { requireJwt, requireRole, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { refusals } from "../platform/wire-errors.js"
import { Accounts } from "./service.js"


const auditContext = Effect.gen(function* () {
  return { requestId: requestIdOf(yield* HttpServerRequest) }
})

export const AuthHandlers = HttpApiBuilder.group(GatewayApi, "auth", (handlers) =>
  Effect.gen(function* () {
    const accounts = yield* Accounts
    return handlers
      .handle("register", ({ payload }) => Effect.flatMap(auditContext, (audit) => accounts.register(payload, audit).pipe(refusals("AccountsError", "InvalidInput", "InviteNotFound", "EmailTaken"))))
      .handle("login", ({ payload }) => accounts.login(payload).pipe(refusals("AccountsError", "InvalidCredentials", "SsoRequired")))
      // A map, not a generator: every SDK calls this first and some call it often.
      .handle("whoami", () =>
        Effect.map(CurrentPrincipal, (principal) => ({
          kind: principal.kind,
          org_uuid: principal.orgUuid,
          user_uuid: principal.userUuid,
          email: principal.email,
          role: principal.role,
          scopes: [...principal.scopes],
          key_id: principal.keyId ?? null
        }))
      )
      .handle("leaveOrg", () =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* accounts.leave(principal, yield* auditContext).pipe(refusals("AccountsError", "OwnerLeaving"))
        })
      )
      .handle("deleteAccount", () =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* accounts.deleteOrganization(principal, yield* auditContext).pipe(refusals("AccountsError", "OwnerOnly"))
        })
      )
  })
)

export const TeamHandlers = HttpApiBuilder.group(GatewayApi, "team", (handlers) =>
  Effect.gen(function* () {
    const accounts = yield* Accounts
    return handlers
      .handle("invite", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          yield* requireRole(["owner", "admin"], "inviting teammates")(principal)
          return yield* accounts.invite(principal, payload, yield* auditContext)
        })
      )
      .handle("members", ({ query }) =>
        Effect.gen(function* () {
          const principal = yield* requireScope("team:read")
          return yield* accounts.members(principal, query.page ?? 1, query.per_page ?? 20)
        })
      )
      .handle("defaultApprovers", () => Effect.flatMap(requireScope("team:read"), accounts.defaultApprovers))
      .handle("setDefaultApprovers", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          yield* requireRole(["owner", "admin"], "setting default approvers")(principal)
          return yield* accounts.setDefaultApprovers(principal, payload.emails, yield* auditContext)
        })
      )
      .handle("setRole", ({ params, payload }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          yield* requireRole(["owner", "admin"], "changing roles")(principal)
          return yield* accounts
            .setRole(principal, params.user_uuid, payload.role, yield* auditContext)
            .pipe(refusals("AccountsError", "MemberNotFound", "OwnerRoleChange"))
        })
      )
      .handle("transferOwnership", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* accounts
            .transferOwnership(principal, payload.target_user_id, yield* auditContext)
            .pipe(refusals("AccountsError", "OwnerOnly", "MemberNotFound", "TargetNotAdmin"))
        })
      )
  })
)

export const ApiKeysHandlers = HttpApiBuilder.group(GatewayApi, "apiKeys", (handlers) =>
  Effect.gen(function* () {
    const accounts = yield* Accounts
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* requireScope("keys:write")
          return yield* accounts.createKey(principal, payload, yield* auditContext).pipe(refusals("AccountsError", "InvalidInput", "ScopesBeyondKey"))
        })
      )
      .handle("list", ({ query }) =>
        Effect.gen(function* () {
          const principal = yield* requireScope("keys:read")
          return yield* accounts.listKeys(principal, query.page ?? 1, query.per_page ?? 20)
        })
      )
      .handle("revoke", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* requireScope("keys:write")
          return yield* accounts.revokeKey(principal, params.key_id, yield* auditContext).pipe(refusals("AccountsError", "KeyNotFound", "NotKeyCreator"))
        })
      )
  })
)

export const AccountsHttp = Layer.mergeAll(AuthHandlers, TeamHandlers, ApiKeysHandlers)
