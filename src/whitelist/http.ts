/** Handlers of `/api/v1/endpoint-whitelist*` and `/api/v1/endpoint-approvals*`. */
import * as Effect from "effect/Effect"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { Conflict, NotFound, Unprocessable } from "../../protocol/errors.js"
import { requireRole, requireScope } from "../access/guards.js"
import { answer } from "../platform/wire-errors.js"
import { Whitelist } from "./service.js"

const entryErrors = answer({ EntryNotFound: NotFound })
const addErrors = answer({ InvalidInput: Unprocessable })
const resolveErrors = answer({ ApprovalNotFound: NotFound, AlreadyResolved: Conflict, InvalidInput: Unprocessable })

const admin = (scope: string, what: string) => Effect.flatMap(requireScope(scope), requireRole(["owner", "admin"], what))

export const WhitelistHttp = HttpApiBuilder.group(GatewayApi, "whitelist", (handlers) =>
  Effect.gen(function* () {
    const whitelist = yield* Whitelist
    return handlers
      .handle("list", () => Effect.flatMap(requireScope("whitelist:read"), whitelist.list))
      .handle("add", ({ payload }) => Effect.flatMap(requireScope("whitelist:write"), (principal) => addErrors(whitelist.add(principal, payload))))
      .handle("settings", () => Effect.flatMap(requireScope("whitelist:read"), whitelist.mode))
      .handle("setSettings", ({ payload }) =>
        Effect.flatMap(admin("whitelist:write", "changing the whitelist mode"), (principal) => whitelist.setMode(principal, payload.mode))
      )
      .handle("approve", ({ params }) =>
        Effect.flatMap(admin("whitelist:write", "approving whitelist entries"), (principal) =>
          entryErrors(whitelist.setEntryStatus(principal, params.id, "approved"))
        )
      )
      .handle("reject", ({ params }) =>
        Effect.flatMap(admin("whitelist:write", "rejecting whitelist entries"), (principal) =>
          entryErrors(whitelist.setEntryStatus(principal, params.id, "rejected"))
        )
      )
      .handle("remove", ({ params }) =>
        Effect.flatMap(admin("whitelist:write", "deleting whitelist entries"), (principal) => entryErrors(whitelist.remove(principal, params.id)))
      )
      .handle("approvals", () => Effect.flatMap(requireScope("whitelist:read"), whitelist.approvals))
      .handle("approveRequest", ({ params, payload }) =>
        Effect.flatMap(admin("whitelist:write", "approving endpoint requests"), (principal) =>
          resolveErrors(whitelist.resolveApproval(principal, params.id, "approved", payload?.add_pattern === true))
        )
      )
      .handle("rejectRequest", ({ params }) =>
        Effect.flatMap(admin("whitelist:write", "rejecting endpoint requests"), (principal) =>
          Effect.map(resolveErrors(whitelist.resolveApproval(principal, params.id, "rejected", false)), ({ id, status }) => ({ id, status }))
        )
      )
  })
)
