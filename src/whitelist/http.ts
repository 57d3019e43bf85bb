/** Handlers of `/api/v1/endpoint-whitelist*` and `/api/v1/endpoint-approvals*`. */
import * as Effect from "effect/Effect"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireRole, requireScope } from "../access/guards.js"
import { refusals } from "../platform/wire-errors.js"
import { Whitelist } from "./service.js"

const entryErrors = refusals("WhitelistError", "EntryNotFound")

const admin = (scope: string, what: string) => Effect.flatMap(requireScope(scope), requireRole(["owner", "admin"], what))

export const WhitelistHttp = HttpApiBuilder.group(GatewayApi, "whitelist", (handlers) =>
  Effect.gen(function* () {
    const whitelist = yield* Whitelist
    return handlers
      .handle("list", () => Effect.flatMap(requireScope("whitelist:read"), whitelist.list))
      .handle("add", ({ payload }) => Effect.flatMap(requireScope("whitelist:write"), (principal) => whitelist.add(principal, payload).pipe(refusals("WhitelistError", "InvalidInput"))))
      .handle("settings", () => Effect.flatMap(requireScope("whitelist:read"), whitelist.mode))
      .handle("setSettings", ({ payload }) =>
        Effect.flatMap(admin("whitelist:write", "changing the whitelist mode"), (principal) => whitelist.setMode(principal, payload.mode))
      )
      .handle("approve", ({ params }) =>
        Effect.flatMap(admin("whitelist:write", "approving whitelist entries"), (principal) =>
          whitelist.setEntryStatus(principal, params.id, "approved").pipe(entryErrors)
        )
      )
      .handle("reject", ({ params }) =>
        Effect.flatMap(admin("whitelist:write", "rejecting whitelist entries"), (principal) =>
          whitelist.setEntryStatus(principal, params.id, "rejected").pipe(entryErrors)
        )
      )
      .handle("remove", ({ params }) =>
        Effect.flatMap(admin("whitelist:write", "deleting whitelist entries"), (principal) => whitelist.remove(principal, params.id).pipe(entryErrors))
      )
      .handle("approvals", () => Effect.flatMap(requireScope("whitelist:read"), whitelist.approvals))
      .handle("approveRequest", ({ params, payload }) =>
        Effect.flatMap(admin("whitelist:write", "approving endpoint requests"), (principal) =>
          whitelist
            .resolveApproval(principal, params.id, "approved", payload?.add_pattern === true)
            .pipe(refusals("WhitelistError", "ApprovalNotFound", "AlreadyResolved", "InvalidInput"))
        )
      )
      .handle("rejectRequest", ({ params }) =>
        Effect.flatMap(admin("whitelist:write", "rejecting endpoint requests"), (principal) =>
          whitelist.resolveApproval(principal, params.id, "rejected", false).pipe(
            refusals("WhitelistError", "ApprovalNotFound", "AlreadyResolved"),
            Effect.map(({ id, status }) => ({ id, status }))
          )
        )
      )
  })
)
