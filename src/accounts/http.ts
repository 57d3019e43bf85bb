/** Handlers of the accounts groups: `/api/v1/auth/*`, `/api/v1/team/*`, and `/api/v1/api-keys*`. */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import * as Layer from "effect/Layer"
import { GatewayApi } from "../../protocol/api.js"
import { CurrentPrincipal } from "../../protocol/auth.js"
import { Conflict, Forbidden, NotFound, Unauthorized, Unprocessable } from "../../protocol/errors.js"
import { requireJwt, requireRole, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { answer } from "../platform/wire-errors.js"
import { Accounts } from "./service.js"

const registerErrors = answer({ InvalidInput: Unprocessable, InviteNotFound: NotFound, EmailTaken: Conflict })
const loginErrors = answer({ InvalidCredentials: Unauthorized, SsoRequired: Forbidden })
const leaveErrors = answer({ OwnerLeaving: Conflict })
const ownerErrors = answer({ OwnerOnly: Forbidden })
const setRoleErrors = answer({ MemberNotFound: NotFound, OwnerRoleChange: Conflict })
const transferErrors = answer({ OwnerOnly: Forbidden, MemberNotFound: NotFound, TargetNotAdmin: Unprocessable })
const createKeyErrors = answer({ InvalidInput: Unprocessable, ScopesBeyondKey: Forbidden })
const revokeKeyErrors = answer({ KeyNotFound: NotFound, NotKeyCreator: Forbidden })

const auditContext = Effect.gen(function* () {
  return { requestId: requestIdOf(yield* HttpServerRequest) }
})

export const AuthHandlers = HttpApiBuilder.group(GatewayApi, "auth", (handlers) =>
  Effect.gen(function* () {
    const accounts = yield* Accounts
    return handlers
      .handle("register", ({ payload }) => Effect.flatMap(auditContext, (audit) => registerErrors(accounts.register(payload, audit))))
      .handle("login", ({ payload }) => loginErrors(accounts.login(payload)))
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
          return yield* leaveErrors(accounts.leave(principal, yield* auditContext))
        })
      )
      .handle("deleteAccount", () =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* ownerErrors(accounts.deleteOrganization(principal, yield* auditContext))
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
          return yield* setRoleErrors(accounts.setRole(principal, params.user_uuid, payload.role, yield* auditContext))
        })
      )
      .handle("transferOwnership", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* transferErrors(accounts.transferOwnership(principal, payload.target_user_id, yield* auditContext))
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
          return yield* createKeyErrors(accounts.createKey(principal, payload, yield* auditContext))
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
          return yield* revokeKeyErrors(accounts.revokeKey(principal, params.key_id, yield* auditContext))
        })
      )
  })
)

export const AccountsHttp = Layer.mergeAll(AuthHandlers, TeamHandlers, ApiKeysHandlers)
